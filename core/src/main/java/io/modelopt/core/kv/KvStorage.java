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

    /**
     * Stores {@code src[off .. off+kvDim)} (head after head) as the key in {@code slot}, converted to
     * the layout's dtype: F16 and BF16 round to nearest even; INT8 sets the slot's per-head scale to
     * absmax/127 and rounds {@code x/scale}; FP8 divides by the layer's static scale and rounds
     * (saturating at ±448).
     */
    default void writeKey(int layer, long slot, float[] src, int off) { KvCodec.write(layout(), keys(layer), keyScales(layer), slot, src, off); }

    default void writeValue(int layer, long slot, float[] src, int off) { KvCodec.write(layout(), values(layer), valueScales(layer), slot, src, off); }

    /** Reads the key in {@code slot}, all heads, into {@code dst[off .. off+kvDim)} as floats (dequantized). */
    default void readKey(int layer, long slot, float[] dst, int off) { KvCodec.read(layout(), keys(layer), keyScales(layer), slot, dst, off); }

    default void readValue(int layer, long slot, float[] dst, int off) { KvCodec.read(layout(), values(layer), valueScales(layer), slot, dst, off); }

    /**
     * Sets the static scales of {@code layer} (FP8: {@link KvScaleLayout#PER_LAYER} takes one
     * value each, {@link KvScaleLayout#PER_LAYER_HEAD} one per KV head), e.g. calibrated absmax/448.
     * Entries already written keep the scale they were written with, so set scales before use.
     */
    default void setStaticScales(int layer, float[] keyScales, float[] valueScales) {
        KvLayout l = layout();
        if (!l.scales().isStatic()) throw new IllegalStateException(l.dtype() + " storage with " + l.scales() + " scales has no static scales to set");
        long n = l.scalesPerLayer();
        if (keyScales.length != n || valueScales.length != n) {
            throw new IllegalArgumentException("layer " + layer + ": " + l.scales() + " takes " + n + " scales each for keys and values, got "
                    + keyScales.length + " and " + valueScales.length);
        }
        for (int i = 0; i < n; i++) {
            if (!(keyScales[i] > 0) || !(valueScales[i] > 0) || Float.isInfinite(keyScales[i]) || Float.isInfinite(valueScales[i])) {
                throw new IllegalArgumentException("layer " + layer + " scale " + i + ": K " + keyScales[i] + ", V " + valueScales[i] + " must be finite and > 0");
            }
        }
        MemorySegment.copy(keyScales, 0, keyScales(layer), F32_LE, 0, (int) n);
        MemorySegment.copy(valueScales, 0, valueScales(layer), F32_LE, 0, (int) n);
    }

    /** Frees the memory; the storage must not be used afterwards. */
    @Override void close();
}
