package io.modelopt.core.tokenizer;

import java.util.Arrays;

/**
 * Which adjacent symbol pairs may merge, with the merge's priority ("rank", lower merges first)
 * and the symbol the pair becomes. Keys are pairs of int symbol ids packed into a long, held in
 * an open-addressing table so that the merge loop does no boxing and no string building.
 *
 * <p>Symbol ids are vocabulary ids where the symbol is a token; the GGUF tokenizers also use
 * negative ids {@code -(codePoint + 1)} for single characters the vocabulary lacks and ids
 * {@code >= vocabSize} for merge parts that are not tokens (llama.cpp merges by text, so such
 * pairs still merge). Immutable once built.
 */
final class MergeTable {
    private static final long EMPTY = Long.MIN_VALUE; // never a real key: ids are > Integer.MIN_VALUE

    private final long[] keys;
    private final int[] ranks;
    private final int[] results;
    private final int mask;
    private int size;

    MergeTable(int expectedEntries) {
        int cap = Integer.highestOneBit(Math.max(4, expectedEntries) * 2 - 1) << 1;
        keys = new long[cap];
        Arrays.fill(keys, EMPTY);
        ranks = new int[cap];
        results = new int[cap];
        mask = cap - 1;
    }

    static long key(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFF_FFFFL);
    }

    private int slot(long key) {
        long h = key * 0x9E37_79B9_7F4A_7C15L;
        int i = (int) (h ^ (h >>> 29)) & mask;
        while (keys[i] != EMPTY && keys[i] != key) i = (i + 1) & mask;
        return i;
    }

    /**
     * Adds a merge. When the pair is already present, {@code keepFirst} keeps the existing entry
     * (llama.cpp's {@code bpe_ranks.emplace}); otherwise the later one wins (a Rust HashMap
     * collected from HF merges). Returns whether the table changed.
     */
    boolean put(int left, int right, int rank, int result, boolean keepFirst) {
        if (size * 2 >= keys.length) throw new IllegalStateException("merge table full: sized for fewer entries");
        long k = key(left, right);
        int i = slot(k);
        if (keys[i] == k) {
            if (keepFirst) return false;
        } else {
            keys[i] = k;
            size++;
        }
        ranks[i] = rank;
        results[i] = result;
        return true;
    }

    /** Slot of the pair, or -1 when the pair never merges. */
    int find(int left, int right) {
        long k = key(left, right);
        int i = slot(k);
        return keys[i] == k ? i : -1;
    }

    int rankAt(int slot) { return ranks[slot]; }

    int resultAt(int slot) { return results[slot]; }

    int size() { return size; }
}
