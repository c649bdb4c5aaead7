package io.modelopt.kvcache;

/**
 * Prefix-cache counters of a {@link BlockManager} since it was built (or since
 * {@link BlockManager#resetPrefixCache}).
 *
 * @param queriedBlocks full prompt blocks looked up by successful {@link BlockManager#allocate} calls
 * @param hitBlocks     of those, the blocks found cached (their prefill was skipped)
 * @param hitTokens     tokens of the hit blocks ({@code hitBlocks × blockSize})
 * @param evictions     cached blocks whose memory was reused for new data (their hash forgotten)
 * @param cachedBlocks  blocks holding a registered hash now, in use or free-but-cached
 */
public record PrefixCacheStats(long queriedBlocks, long hitBlocks, long hitTokens, long evictions, int cachedBlocks) {
    /** Full blocks looked up and not found. */
    public long missBlocks() { return queriedBlocks - hitBlocks; }

    /** hitBlocks / queriedBlocks, 0 when nothing was queried. */
    public double hitRate() { return queriedBlocks == 0 ? 0 : (double) hitBlocks / queriedBlocks; }
}
