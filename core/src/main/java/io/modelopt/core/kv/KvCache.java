package io.modelopt.core.kv;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Attention-side storage of keys and values: for each layer, each sequence, each position and
 * each KV head, a key entry and a value entry of {@code headDim} elements.
 *
 * <p>The storage model is a table of <em>slots</em>: {@link #slot(int, int)} maps (sequence,
 * position) to the slot that holds it, and per layer one key segment and one value segment hold
 * the entries; KV head {@code h}'s entry of slot {@code s} starts at byte
 * {@code entryOffset(s) + h · headStride()}. The entries of one head are stored position after
 * position (as vLLM's blocks keep each head's positions together): decode attention streams a
 * head's keys and values through contiguous memory instead of picking 128 bytes out of every
 * position's full row, which measured 2.7 GB/s at 1000 positions. A contiguous cache is a single
 * block of {@code maxPositions} per sequence; a paged cache maps through its block table
 * ({@code blockTable[seq][pos / blockSize]}), its entry offsets going block by block. The
 * attention kernel and the key/value writes work unchanged on both: they only need
 * {@link #slot}, {@link #entryOffset}, {@link #headStride}, {@link #keys}/{@link #values} and
 * {@link #dtype}.
 *
 * <p>This is storage ({@link #storage()}) together with a fixed mapping ({@link #slot}): the
 * default for one or a few sequences (generation, perplexity). A paged cache keeps the mapping
 * out of the storage: its block manager hands each step's {@link io.modelopt.core.engine.Batch}
 * the block tables, and the runner runs on the bare {@link KvStorage}
 * ({@link io.modelopt.core.engine.ModelRunner#forward(io.modelopt.core.engine.Batch, KvStorage)}).
 *
 * <p>The cache tracks, per sequence, how many positions ({@link #length}) hold valid data; the
 * runner sets it after each forward step. Writes and reads from different threads to different
 * slots are safe; everything else is single-threaded (one scheduler step at a time).
 */
public interface KvCache extends AutoCloseable {
    ValueLayout.OfFloat F32_LE = KvStorage.F32_LE;
    ValueLayout.OfShort F16_LE = KvStorage.F16_LE;

    /** The memory the entries live in. */
    KvStorage storage();

    default int numLayers() { return storage().layout().numLayers(); }

    default int numKvHeads() { return storage().layout().numKvHeads(); }

    /** Elements of one head's key (or value) entry. */
    default int headDim() { return storage().layout().headDim(); }

    /** Elements of a position's key (or value) over all heads: numKvHeads × headDim. */
    default int kvDim() { return numKvHeads() * headDim(); }

    default KvDtype dtype() { return storage().layout().dtype(); }

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

    /** The slot holding {@code pos} of {@code seq}; {@code pos < capacity(seq)}. */
    long slot(int seq, int pos);

    /** Byte offset, in {@link #keys}/{@link #values}, of KV head 0's entry of {@code slot}. */
    default long entryOffset(long slot) { return storage().layout().entryOffset(slot); }

    /** Bytes from KV head {@code h}'s entry of a slot to head {@code h + 1}'s entry of the same slot. */
    default long headStride() { return storage().layout().headStride(); }

    /** Key storage of {@code layer}: every slot's entries of {@link #dtype()}, little endian, at {@link #entryOffset}. */
    default MemorySegment keys(int layer) { return storage().keys(layer); }

    /** Value storage of {@code layer}, laid out like {@link #keys}. */
    default MemorySegment values(int layer) { return storage().values(layer); }

    /** Bytes of one head's entry. */
    default long entryBytes() { return (long) headDim() * dtype().bytes(); }

    /** Exact bytes of key and value storage this cache holds. */
    default long byteSize() { return storage().byteSize(); }

    /** Stores {@code src[off .. off+kvDim)} (head after head) as the key of (seq, pos), converting to {@link #dtype()}. */
    default void writeKey(int layer, int seq, int pos, float[] src, int off) { storage().writeKey(layer, slot(seq, pos), src, off); }

    /** Stores a value, like {@link #writeKey}. */
    default void writeValue(int layer, int seq, int pos, float[] src, int off) { storage().writeValue(layer, slot(seq, pos), src, off); }

    /** Reads the key of (seq, pos), all heads, into {@code dst[off .. off+kvDim)} as floats. */
    default void readKey(int layer, int seq, int pos, float[] dst, int off) { storage().readKey(layer, slot(seq, pos), dst, off); }

    /** Reads a value, like {@link #readKey}. */
    default void readValue(int layer, int seq, int pos, float[] dst, int off) { storage().readValue(layer, slot(seq, pos), dst, off); }

    /** Frees the storage; the cache must not be used afterwards. */
    @Override void close();
}
