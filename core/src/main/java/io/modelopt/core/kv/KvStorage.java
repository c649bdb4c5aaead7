package io.modelopt.core.kv;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Physical key/value memory, allocated by a backend ({@link io.modelopt.core.engine.ModelRunner#newKvStorage})
 * in the shape of its {@link KvLayout}: blocks of token slots, nothing more. Which slot holds
 * which (sequence, position) is not the storage's business: it comes with each step's
 * {@link io.modelopt.core.engine.Batch} (block tables, as vLLM passes them), decided by a block
 * manager (the kvcache module) or by the contiguous cache's fixed arithmetic ({@link ContiguousKvCache}).
 *
 * <p>Writes and reads of different slots from different threads are safe.
 */
public interface KvStorage extends AutoCloseable {
    ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    ValueLayout.OfShort F16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    KvLayout layout();

    /** Key entries of {@code layer}, {@link KvLayout#layerBytes()} bytes, little endian. */
    MemorySegment keys(int layer);

    /** Value entries of {@code layer}, laid out like {@link #keys}. */
    MemorySegment values(int layer);

    /** F32 scales of {@code layer}'s keys (empty without {@link KvLayout#scales()}). */
    MemorySegment keyScales(int layer);

    /** F32 scales of {@code layer}'s values (empty without {@link KvLayout#scales()}). */
    MemorySegment valueScales(int layer);

    /** Exact bytes held: entries and scales. */
    default long byteSize() { return layout().byteSize(); }

    /** Stores {@code src[off .. off+kvDim)} (head after head) as the key in {@code slot}, converted to the layout's dtype. */
    default void writeKey(int layer, long slot, float[] src, int off) { write(keys(layer), slot, src, off); }

    default void writeValue(int layer, long slot, float[] src, int off) { write(values(layer), slot, src, off); }

    /** Reads the key in {@code slot}, all heads, into {@code dst[off .. off+kvDim)} as floats. */
    default void readKey(int layer, long slot, float[] dst, int off) { read(keys(layer), slot, dst, off); }

    default void readValue(int layer, long slot, float[] dst, int off) { read(values(layer), slot, dst, off); }

    private void write(MemorySegment seg, long slot, float[] src, int off) {
        KvLayout l = layout();
        int d = l.headDim();
        long stride = l.headStride(), entry = l.entryOffset(slot);
        for (int h = 0; h < l.numKvHeads(); h++, entry += stride, off += d) {
            if (l.dtype() == KvDtype.F32) {
                MemorySegment.copy(src, off, seg, F32_LE, entry, d);
            } else {
                for (int i = 0; i < d; i++) seg.set(F16_LE, entry + 2L * i, Float.floatToFloat16(src[off + i]));
            }
        }
    }

    private void read(MemorySegment seg, long slot, float[] dst, int off) {
        KvLayout l = layout();
        int d = l.headDim();
        long stride = l.headStride(), entry = l.entryOffset(slot);
        for (int h = 0; h < l.numKvHeads(); h++, entry += stride, off += d) {
            if (l.dtype() == KvDtype.F32) {
                MemorySegment.copy(seg, F32_LE, entry, dst, off, d);
            } else {
                for (int i = 0; i < d; i++) dst[off + i] = Float.float16ToFloat(seg.get(F16_LE, entry + 2L * i));
            }
        }
    }

    /** Frees the memory; the storage must not be used afterwards. */
    @Override void close();
}
