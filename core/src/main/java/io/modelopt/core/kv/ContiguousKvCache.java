package io.modelopt.core.kv;

import java.util.Arrays;

/**
 * A KV cache with a fixed region of {@code maxPositions} slots per sequence: slot
 * {@code seq × maxPositions + pos}, stored {@code [kvHead][seq][pos][headDim]} (each head's
 * positions contiguous, see {@link KvCache}). Right for one or a few sequences (generation, perplexity,
 * tests); a server with many sequences of varying length wants the paged cache of the kvcache
 * module, whose block manager passes block tables with each batch over a bare {@link KvStorage}.
 *
 * <p>Storage is a {@link KvStorage} of {@code maxSequences} blocks of {@code maxPositions} slots;
 * the default one ({@link HostKvStorage}) is off-heap, two segments (keys, values) per layer in a shared arena it
 * owns ({@link #close()} frees it at once rather than at some later GC). Off-heap rather
 * than {@code float[]}: the attention kernel reads every cache through {@link java.lang.foreign.MemorySegment}s
 * (the paged and CUDA caches have no Java arrays), F16 needs no array type, a segment is not
 * limited to 2^31 elements, and the GC never scans or copies it. The arena is shared because the
 * compute pool's workers write and read it. Memory starts zeroed.
 */
public final class ContiguousKvCache implements KvCache {
    private final int maxSequences, maxPositions;
    private final KvStorage storage;
    private final int[] lengths;

    public ContiguousKvCache(int numLayers, int numKvHeads, int headDim, int maxSequences, int maxPositions, KvDtype dtype) {
        this(layout(numLayers, numKvHeads, headDim, maxSequences, maxPositions, dtype), null);
    }

    /** A cache over {@code storage}: one block per sequence, its slots the sequence's positions. */
    public ContiguousKvCache(KvStorage storage) {
        this(storage.layout(), storage);
    }

    private ContiguousKvCache(KvLayout layout, KvStorage storage) {
        this.maxSequences = layout.numBlocks();
        this.maxPositions = layout.blockSize();
        if (storage == null) {
            try {
                storage = new HostKvStorage(layout);
            } catch (IllegalStateException e) {
                throw new IllegalStateException("cannot allocate a KV cache of " + layout.byteSize() + " bytes (" + layout.numLayers() + " layers x "
                        + maxSequences + " sequences x " + maxPositions + " positions x " + layout.numKvHeads() + " heads x " + layout.headDim()
                        + " x " + layout.dtype() + ")", e.getCause());
            }
        }
        this.storage = storage;
        this.lengths = new int[maxSequences];
    }

    /** The storage layout of a contiguous cache: one block of {@code maxPositions} slots per sequence (checked, with the cache's messages). */
    public static KvLayout layout(int numLayers, int numKvHeads, int headDim, int maxSequences, int maxPositions, KvDtype dtype) {
        check("numLayers", numLayers);
        check("numKvHeads", numKvHeads);
        check("headDim", headDim);
        check("maxSequences", maxSequences);
        check("maxPositions", maxPositions);
        java.util.Objects.requireNonNull(dtype, "dtype");
        try {
            return KvLayout.of(numLayers, numKvHeads, headDim, maxSequences, maxPositions, dtype);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("KV cache of " + numLayers + " layers x " + maxSequences + " sequences x " + maxPositions
                    + " positions x " + numKvHeads + " heads x " + headDim + " x " + dtype + " overflows a long");
        }
    }

    private static void check(String what, int v) {
        if (v < 1) throw new IllegalArgumentException("KV cache " + what + " (" + v + ") must be >= 1");
    }

    @Override public KvStorage storage() { return storage; }
    @Override public int maxSequences() { return maxSequences; }

    /** Positions per sequence. */
    public int maxPositions() { return maxPositions; }

    @Override public int capacity(int seq) {
        checkSeq(seq);
        return maxPositions;
    }

    @Override public int length(int seq) { return lengths[checkSeq(seq)]; }

    @Override public void setLength(int seq, int length) {
        checkSeq(seq);
        if (length < 0 || length > maxPositions) {
            throw new IllegalArgumentException("sequence " + seq + ": length " + length + " outside [0, " + maxPositions + "]");
        }
        lengths[seq] = length;
    }

    @Override public void clear(int seq) { lengths[checkSeq(seq)] = 0; }

    /** Forgets all sequences. */
    public void clearAll() { Arrays.fill(lengths, 0); }

    @Override public void truncate(int seq, int length) {
        checkSeq(seq);
        if (length < 0 || length > lengths[seq]) {
            throw new IllegalArgumentException("sequence " + seq + ": cannot truncate to " + length + " (it holds " + lengths[seq] + " positions)");
        }
        lengths[seq] = length;
    }

    /** Slot {@code seq × maxPositions + pos}: block {@code seq}, token {@code pos} of it. */
    @Override public long slot(int seq, int pos) {
        if (pos < 0 || pos >= maxPositions) {
            throw new IndexOutOfBoundsException("position " + pos + " outside the KV cache's " + maxPositions + " positions per sequence");
        }
        return (long) checkSeq(seq) * maxPositions + pos;
    }

    @Override public void close() { storage.close(); }

    private int checkSeq(int seq) {
        if (seq < 0 || seq >= maxSequences) {
            throw new IndexOutOfBoundsException("sequence id " + seq + " outside the KV cache's " + maxSequences + " sequences");
        }
        return seq;
    }

    @Override public String toString() {
        return "ContiguousKvCache[" + numLayers() + " layers, " + maxSequences + " x " + maxPositions + " positions, " + numKvHeads() + " heads x " + headDim()
                + ", " + dtype() + ", " + byteSize() + " B]";
    }
}
