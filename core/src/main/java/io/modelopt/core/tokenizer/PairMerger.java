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
 *
 * <p>With a {@link Joinable}, the symbols are first cut where no merge can ever join the two
 * sides, and each run is merged on its own. Merges in different runs never interact, so the
 * result is the same; but a 300 KB text without pre-tokenizer (SentencePiece style) becomes
 * thousands of word-sized heaps that stay in cache instead of one of a million entries.
 */
final class PairMerger {
    private PairMerger() {}

    /** Whether two adjacent symbols could ever end up inside one merged symbol. May answer true too often, never too rarely. */
    @FunctionalInterface
    interface Joinable {
        boolean mayJoin(int left, int right);
    }

    /** {@link #merge(int[], int, MergeTable, Joinable)} over the whole input as one run. */
    static int merge(int[] symbols, int n, MergeTable table) {
        return merge(symbols, n, table, null);
    }

    /**
     * Merges {@code symbols[0..n)} in place by {@code table} and returns the number of symbols
     * left, which are compacted to the front of the array in order.
     */
    static int merge(int[] symbols, int n, MergeTable table, Joinable joinable) {
        if (n < 2) return n;
        int[] next = new int[n];
        int[] prev = new int[n];
        boolean[] dead = new boolean[n];
        LongHeap heap = new LongHeap(joinable == null ? n : 64);
        int out = 0;
        for (int start = 0; start < n; ) {
            int end = start + 1;
            if (joinable == null) end = n;
            else while (end < n && joinable.mayJoin(symbols[end - 1], symbols[end])) end++;
            out = mergeRun(symbols, start, end, table, next, prev, dead, heap, out);
            start = end;
        }
        return out;
    }

    /** Merges the run [start, end) and writes its survivors from {@code out} on (out <= start); returns the new out. */
    private static int mergeRun(int[] symbols, int start, int end, MergeTable table, int[] next, int[] prev,
                                boolean[] dead, LongHeap heap, int out) {
        for (int i = start; i < end; i++) {
            prev[i] = i - 1 >= start ? i - 1 : -1;
            next[i] = i + 1 < end ? i + 1 : -1;
        }
        for (int i = start; i + 1 < end; i++) {
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
        for (int i = start; i >= 0; i = next[i]) symbols[out++] = symbols[i];
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
