package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/** IEEE binary16 ({@code GGML_TYPE_F16}): one element per "block". */
public final class F16 {
    private F16() {}

    public static final int BLOCK_ELEMENTS = GgmlType.F16.blockSize();
    public static final int BLOCK_BYTES = GgmlType.F16.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(LittleEndian.SHORT.withName("bits"));

    /** {@code dst[dstOffset + i] = half(src[byteOffset + 2i])}, as {@code ggml_fp16_to_fp32_row}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        for (int i = 0; i < n; i++) dst[dstOffset + i] = LittleEndian.half(src, byteOffset + 2L * i);
    }

    /** Round to nearest even, as {@code ggml_fp32_to_fp16_row} with F16C. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        for (int i = 0; i < n; i++) LittleEndian.putHalf(dst, dstOff + 2L * i, src[off + i]);
    }
}
