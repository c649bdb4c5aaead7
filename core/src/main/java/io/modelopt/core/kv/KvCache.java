package io.modelopt.core.kv;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Attention-side storage of keys and values: for each layer, each sequence and each position, a
 * key row and a value row of {@code kvDim = numKvHeads × headDim} elements, laid out
 * {@code [kvHead][headDim]}.
 *
 * <p>The storage model is a table of <em>slots</em>: per layer, one key segment and one value
 * segment of {@code slots × kvDim} elements; {@link #slot(int, int)} maps (sequence, position) to
 * the slot that holds it. A contiguous cache maps {@code seq × maxPositions + pos}; a paged cache
 * maps through its block table ({@code blockTable[seq][pos / blockSize] × blockSize + pos %
 * blockSize}), so the attention kernel and the key/value writes work unchanged on both: they only
 * need {@link #slot}, {@link #keys}/{@link #values} and {@link #dtype}.
 *
 * <p>The cache tracks, per sequence, how many positions ({@link #length}) hold valid data; the
 * runner sets it after each forward step. Writes and reads from different threads to different
 * slots are safe; everything else is single-threaded (one scheduler step at a time).
 */
public interface KvCache extends AutoCloseable {
    ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    ValueLayout.OfShort F16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    int numLayers();

    /** Elements per key (and value) row: numKvHeads × headDim. */
    int kvDim();

    KvDtype dtype();

    /** Sequence ids are {@code 0 .. maxSequences()-1}. */
    int maxSequences();

    /** Positions {@code seq} can hold now (contiguous: fixed; paged: the blocks its table holds × block size). */
    int capacity(int seq);

    /** Positions {@code 0 .. length-1} of {@code seq} hold valid keys and values. */
    int length(int seq);

    /**
     * Sets the valid length of {@code seq} (the runner calls it after writing positions up to
     * {@code length - 1}); must be within {@link #capacity(int)}.
     */
    void setLength(int seq, int length);

    /** Forgets everything of {@code seq}: its length becomes 0 (a paged cache also frees its blocks). */
    void clear(int seq);

    /** Keeps only the first {@code length} positions of {@code seq} (e.g. to undo rejected draft tokens); {@code length <= length(seq)}. */
    void truncate(int seq, int length);

    /** The slot (row index in {@link #keys}/{@link #values}) holding {@code pos} of {@code seq}; {@code pos < capacity(seq)}. */
    long slot(int seq, int pos);

    /** Key storage of {@code layer}: {@code slots × kvDim} elements of {@link #dtype()}, little endian. */
    MemorySegment keys(int layer);

    /** Value storage of {@code layer}, laid out like {@link #keys}. */
    MemorySegment values(int layer);

    /** Bytes of one key (or value) row. */
    default long rowBytes() { return (long) kvDim() * dtype().bytes(); }

    /** Exact bytes of key and value storage this cache holds. */
    long byteSize();

    /** Stores {@code src[off .. off+kvDim)} as the key of (seq, pos), converting to {@link #dtype()}. */
    default void writeKey(int layer, int seq, int pos, float[] src, int off) {
        write(keys(layer), slot(seq, pos) * rowBytes(), src, off);
    }

    /** Stores a value row, like {@link #writeKey}. */
    default void writeValue(int layer, int seq, int pos, float[] src, int off) {
        write(values(layer), slot(seq, pos) * rowBytes(), src, off);
    }

    /** Reads the key of (seq, pos) into {@code dst[off .. off+kvDim)} as floats. */
    default void readKey(int layer, int seq, int pos, float[] dst, int off) {
        read(keys(layer), slot(seq, pos) * rowBytes(), dst, off);
    }

    /** Reads a value row, like {@link #readKey}. */
    default void readValue(int layer, int seq, int pos, float[] dst, int off) {
        read(values(layer), slot(seq, pos) * rowBytes(), dst, off);
    }

    private void write(MemorySegment seg, long byteOff, float[] src, int off) {
        int n = kvDim();
        if (dtype() == KvDtype.F32) {
            MemorySegment.copy(src, off, seg, F32_LE, byteOff, n);
        } else {
            for (int i = 0; i < n; i++) seg.set(F16_LE, byteOff + 2L * i, Float.floatToFloat16(src[off + i]));
        }
    }

    private void read(MemorySegment seg, long byteOff, float[] dst, int off) {
        int n = kvDim();
        if (dtype() == KvDtype.F32) {
            MemorySegment.copy(seg, F32_LE, byteOff, dst, off, n);
        } else {
            for (int i = 0; i < n; i++) dst[off + i] = Float.float16ToFloat(seg.get(F16_LE, byteOff + 2L * i));
        }
    }

    /** Frees the storage; the cache must not be used afterwards. */
    @Override void close();
}
