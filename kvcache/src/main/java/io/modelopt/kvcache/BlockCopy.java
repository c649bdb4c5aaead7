package io.modelopt.kvcache;

/**
 * A copy-on-write the caller must carry out on the KV storage before the next forward step:
 * copy every layer's keys, values (and scales) of physical block {@code source} into block
 * {@code destination} ({@link BlockCopier#copy}). Issued by {@link BlockManager#appendSlots} when a
 * sequence is about to write into a partially filled block it shares with a forked sibling.
 */
public record BlockCopy(int source, int destination) {}
