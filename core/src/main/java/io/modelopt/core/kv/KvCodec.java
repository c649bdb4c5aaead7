package io.modelopt.core.kv;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Conversion of one slot's entries (all KV heads) between floats and a {@link KvLayout}'s dtype,
 * with its scales: the reference the attention kernel's on-the-fly dequantization must match.
 */
final class KvCodec {
    private KvCodec() {}

    static final float INT8_MAX = 127f;

    static void write(KvLayout l, MemorySegment seg, MemorySegment scales, long slot, float[] src, int off) {
        int d = l.headDim();
        long stride = l.headStride(), entry = l.entryOffset(slot);
        for (int h = 0; h < l.numKvHeads(); h++, entry += stride, off += d) {
            switch (l.dtype()) {
                case F32 -> MemorySegment.copy(src, off, seg, KvStorage.F32_LE, entry, d);
                case F16 -> {
                    for (int i = 0; i < d; i++) seg.set(KvStorage.F16_LE, entry + 2L * i, Float.floatToFloat16(src[off + i]));
                }
                case BF16 -> {
                    for (int i = 0; i < d; i++) seg.set(KvStorage.F16_LE, entry + 2L * i, toBf16(src[off + i]));
                }
                case INT8 -> {
                    float amax = 0;
                    for (int i = 0; i < d; i++) amax = Math.max(amax, Math.abs(src[off + i]));
                    float scale = amax / INT8_MAX, inv = amax == 0 ? 0 : INT8_MAX / amax;
                    scales.setAtIndex(KvStorage.F32_LE, l.scaleIndex(slot, h), scale);
                    for (int i = 0; i < d; i++) {
                        int q = (int) Math.rint(src[off + i] * inv);
                        seg.set(ValueLayout.JAVA_BYTE, entry + i, (byte) Math.max(-127, Math.min(127, q)));
                    }
                }
                case FP8_E4M3 -> {
                    float inv = 1f / scales.getAtIndex(KvStorage.F32_LE, l.scaleIndex(slot, h));
                    for (int i = 0; i < d; i++) seg.set(ValueLayout.JAVA_BYTE, entry + i, Fp8E4M3.encode(src[off + i] * inv));
                }
            }
        }
    }

    static void read(KvLayout l, MemorySegment seg, MemorySegment scales, long slot, float[] dst, int off) {
        int d = l.headDim();
        long stride = l.headStride(), entry = l.entryOffset(slot);
        for (int h = 0; h < l.numKvHeads(); h++, entry += stride, off += d) {
            switch (l.dtype()) {
                case F32 -> MemorySegment.copy(seg, KvStorage.F32_LE, entry, dst, off, d);
                case F16 -> {
                    for (int i = 0; i < d; i++) dst[off + i] = Float.float16ToFloat(seg.get(KvStorage.F16_LE, entry + 2L * i));
                }
                case BF16 -> {
                    for (int i = 0; i < d; i++) dst[off + i] = fromBf16(seg.get(KvStorage.F16_LE, entry + 2L * i));
                }
                case INT8 -> {
                    float scale = scales.getAtIndex(KvStorage.F32_LE, l.scaleIndex(slot, h));
                    for (int i = 0; i < d; i++) dst[off + i] = seg.get(ValueLayout.JAVA_BYTE, entry + i) * scale;
                }
                case FP8_E4M3 -> {
                    float scale = scales.getAtIndex(KvStorage.F32_LE, l.scaleIndex(slot, h));
                    for (int i = 0; i < d; i++) dst[off + i] = Fp8E4M3.decode(seg.get(ValueLayout.JAVA_BYTE, entry + i)) * scale;
                }
            }
        }
    }

    /** BF16 bits of {@code x}, round to nearest even (NaN stays a quiet NaN). */
    static short toBf16(float x) {
        int b = Float.floatToRawIntBits(x);
        if (Float.isNaN(x)) return (short) ((b >>> 16) | 0x40);
        b += 0x7FFF + ((b >>> 16) & 1);
        return (short) (b >>> 16);
    }

    static float fromBf16(short h) { return Float.intBitsToFloat((h & 0xFFFF) << 16); }
}
