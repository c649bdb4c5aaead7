package io.modelopt.core.tokenizer;

import java.util.Arrays;

/**
 * The BPE merge loop shared by every tokenizer here: symbols in a doubly linked list, candidate
 * pairs in a binary min-heap keyed by (rank, left position), so a text of n symbols costs
 * O(n log n) instead of the quadratic "rescan for the best pair" loop.
 *
 * <p>Order is exactly llama.cpp's ({@code llm_bigram_bpe} / {@code llm_bigram_spm} comparators)
 * and HF tokenizers' ({@code Word::merge_all}): the lowest rank first, ties to the leftmost pair.
 * A heap entry is stale when the symbol at its position died or the pair now there no longer has
 * the entry's rank; the pair actually there was queued with its own entry when it formed.
 */
final class PairMerger {
    private PairMerger() {}

    /**
     * Merges {@code symbols[0..n)} in place by {@code table} and returns the number of symbols
     * left, which are compacted to the front of the array in order.
     */
    static int merge(int[] symbols, int n, MergeTable table) {
        if (n < 2) return n;
        int[] next = new int[n];
        int[] prev = new int[n];
        boolean[] dead = new boolean[n];
        for (int i = 0; i < n; i++) {
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        LongHeap heap = new LongHeap(n);
        for (int i = 0; i + 1 < n; i++) {
            int slot = table.find(symbols[i], symbols[i + 1]);
            if (slot >= 0) heap.push(entry(table.rankAt(slot), i));
        }
        while (!heap.isEmpty()) {
            long e = heap.pop();
            int pos = (int) e;
            int rank = (int) (e >>> 32);
            if (dead[pos]) continue;
            int right = next[pos];
            if (right < 0) continue;
            int slot = table.find(symbols[pos], symbols[right]);
            if (slot < 0 || table.rankAt(slot) != rank) continue;

            symbols[pos] = table.resultAt(slot);
            dead[right] = true;
            int after = next[right];
            next[pos] = after;
            if (after >= 0) prev[after] = pos;

            int before = prev[pos];
            if (before >= 0) {
                int s = table.find(symbols[before], symbols[pos]);
                if (s >= 0) heap.push(entry(table.rankAt(s), before));
            }
            if (after >= 0) {
                int s = table.find(symbols[pos], symbols[after]);
                if (s >= 0) heap.push(entry(table.rankAt(s), pos));
            }
        }
        int out = 0;
        for (int i = 0; i >= 0; i = next[i]) symbols[out++] = symbols[i];
        return out;
    }

    private static long entry(int rank, int pos) {
        return ((long) rank << 32) | pos;
    }

    /** Binary min-heap of longs (rank in the high half, position in the low half). */
    private static final class LongHeap {
        private long[] a;
        private int size;

        LongHeap(int capacity) { a = new long[Math.max(4, capacity)]; }

        boolean isEmpty() { return size == 0; }

        void push(long v) {
            if (size == a.length) a = Arrays.copyOf(a, a.length * 2);
            int i = size++;
            while (i > 0) {
                int p = (i - 1) >>> 1;
                if (a[p] <= v) break;
                a[i] = a[p];
                i = p;
            }
            a[i] = v;
        }

        long pop() {
            long top = a[0];
            long last = a[--size];
            int i = 0;
            int half = size >>> 1;
            while (i < half) {
                int c = 2 * i + 1;
                if (c + 1 < size && a[c + 1] < a[c]) c++;
                if (last <= a[c]) break;
                a[i] = a[c];
                i = c;
            }
            if (size > 0) a[i] = last;
            return top;
        }
    }
}
