package io.modelopt.core.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A KV cache with a fixed region of {@code maxPositions} slots per sequence: slot
 * {@code seq × maxPositions + pos}, stored {@code [seq][kvHead][pos][headDim]} (each head's
 * positions contiguous, see {@link KvCache}). Right for one or a few sequences (generation, perplexity,
 * tests); a server with many sequences of varying length wants the paged cache of the kvcache
 * module, which implements the same {@link KvCache} interface.
 *
 * <p>Storage is off-heap, two segments (keys, values) per layer in a shared {@link Arena} this
 * cache owns ({@link #close()} frees it at once rather than at some later GC). Off-heap rather
 * than {@code float[]}: the attention kernel reads every cache through {@link MemorySegment}s
 * (the paged and CUDA caches have no Java arrays), F16 needs no array type, a segment is not
 * limited to 2^31 elements, and the GC never scans or copies it. The arena is shared because the
 * compute pool's workers write and read it. Memory starts zeroed.
 */
public final class ContiguousKvCache implements KvCache {
    private final int numLayers, numKvHeads, headDim, maxSequences, maxPositions;
    private final long entryBytes, headStride, sequenceBytes;
    private final KvDtype dtype;
    private final Arena arena;
    private final MemorySegment[] keys, values;
    private final int[] lengths;
    private final long byteSize;

    public ContiguousKvCache(int numLayers, int numKvHeads, int headDim, int maxSequences, int maxPositions, KvDtype dtype) {
        check("numLayers", numLayers);
        check("numKvHeads", numKvHeads);
        check("headDim", headDim);
        check("maxSequences", maxSequences);
        check("maxPositions", maxPositions);
        this.numLayers = numLayers;
        this.numKvHeads = numKvHeads;
        this.headDim = headDim;
        this.maxSequences = maxSequences;
        this.maxPositions = maxPositions;
        this.dtype = java.util.Objects.requireNonNull(dtype, "dtype");
        this.entryBytes = (long) headDim * dtype.bytes();
        long perLayer;
        try {
            this.headStride = Math.multiplyExact(entryBytes, (long) maxPositions);
            this.sequenceBytes = Math.multiplyExact(headStride, (long) numKvHeads);
            perLayer = Math.multiplyExact(sequenceBytes, (long) maxSequences);
            this.byteSize = Math.multiplyExact(perLayer, 2L * numLayers);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("KV cache of " + numLayers + " layers x " + maxSequences + " sequences x " + maxPositions
                    + " positions x " + numKvHeads + " heads x " + headDim + " x " + dtype + " overflows a long");
        }
        this.arena = Arena.ofShared();
        this.keys = new MemorySegment[numLayers];
        this.values = new MemorySegment[numLayers];
        try {
            for (int l = 0; l < numLayers; l++) {
                keys[l] = arena.allocate(perLayer, 64);
                values[l] = arena.allocate(perLayer, 64);
            }
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new IllegalStateException("cannot allocate a KV cache of " + byteSize + " bytes (" + numLayers + " layers x "
                    + maxSequences + " sequences x " + maxPositions + " positions x " + numKvHeads + " heads x " + headDim + " x " + dtype + ")", e);
        }
        this.lengths = new int[maxSequences];
    }

    private static void check(String what, int v) {
        if (v < 1) throw new IllegalArgumentException("KV cache " + what + " (" + v + ") must be >= 1");
    }

    @Override public int numLayers() { return numLayers; }
    @Override public int numKvHeads() { return numKvHeads; }
    @Override public int headDim() { return headDim; }
    @Override public KvDtype dtype() { return dtype; }
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

    @Override public long slot(int seq, int pos) {
        if (pos < 0 || pos >= maxPositions) {
            throw new IndexOutOfBoundsException("position " + pos + " outside the KV cache's " + maxPositions + " positions per sequence");
        }
        return (long) checkSeq(seq) * maxPositions + pos;
    }

    @Override public long entryOffset(long slot) {
        return slot / maxPositions * sequenceBytes + slot % maxPositions * entryBytes;
    }

    @Override public long headStride() { return headStride; }

    @Override public MemorySegment keys(int layer) { return keys[layer]; }
    @Override public MemorySegment values(int layer) { return values[layer]; }
    @Override public long byteSize() { return byteSize; }

    @Override public void close() {
        if (arena.scope().isAlive()) arena.close();
    }

    private int checkSeq(int seq) {
        if (seq < 0 || seq >= maxSequences) {
            throw new IndexOutOfBoundsException("sequence id " + seq + " outside the KV cache's " + maxSequences + " sequences");
        }
        return seq;
    }

    @Override public String toString() {
        return "ContiguousKvCache[" + numLayers + " layers, " + maxSequences + " x " + maxPositions + " positions, " + numKvHeads + " heads x " + headDim
                + ", " + dtype + ", " + byteSize + " B]";
    }
}
