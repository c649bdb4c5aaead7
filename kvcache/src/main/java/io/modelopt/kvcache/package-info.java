/**
 * KV cache management (block pool, block tables, copy-on-write fork, prefix cache, memory budget).
 * The storage layout and attention kernels live in core; this module only hands out blocks.
 * Arrives with the paged-KV issue.
 */
package io.modelopt.kvcache;
