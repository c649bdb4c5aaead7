/**
 * KV cache management (block pool, block tables, copy-on-write fork, prefix cache, memory budget).
 * The storage layout and attention kernels live in core; this module only hands out blocks.
 */
package io.modelopt.kvcache;
