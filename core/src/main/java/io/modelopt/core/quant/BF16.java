package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/** bfloat16 ({@code GGML_TYPE_BF16}): the top 16 bits of an IEEE binary32. */
public final class BF16 {
    private BF16() {}

    public static final int BLOCK_ELEMENTS = GgmlType.BF16.blockSize();
    public static final int BLOCK_BYTES = GgmlType.BF16.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(LittleEndian.SHORT.withName("bits"));

    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    /** As ggml's {@code ggml_compute_fp32_to_bf16}: round to nearest even, NaN forced quiet. */
    public static short fromFloat(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) return (short) ((u >>> 16) | 64);
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }

    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        for (int i = 0; i < n; i++) dst[dstOffset + i] = toFloat(src.get(LittleEndian.SHORT, byteOffset + 2L * i));
    }

    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        for (int i = 0; i < n; i++) dst.set(LittleEndian.SHORT, dstOff + 2L * i, fromFloat(src[off + i]));
    }
}
