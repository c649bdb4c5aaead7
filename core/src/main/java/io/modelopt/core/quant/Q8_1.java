package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q8_1}, the activation format of the Q4_1/Q5_1 dot products: 32 elements,
 * {@code half d; half s; int8 qs[32]} where {@code s = d * sum(qs)}; {@code x = d * q}.
 * ggml has no {@code dequantize_row_q8_1}; {@link #dequantize} is the definition {@code x = d*q}.
 */
public final class Q8_1 {
    private Q8_1() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q8_1.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q8_1.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("s"),
            MemoryLayout.sequenceLayout(32, ValueLayout.JAVA_BYTE).withName("qs"));

    /** {@code x = d * q}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q8_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            for (int j = 0; j < 32; j++) dst[dstOffset + b * 32 + j] = src.get(ValueLayout.JAVA_BYTE, blk + 4 + j) * d;
        }
    }

    /** As {@code quantize_row_q8_1_ref}: {@code d = amax/127}, C {@code roundf}, {@code s = sum*d}. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q8_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0.0f;
            for (int j = 0; j < 32; j++) {
                float a = Math.abs(src[x + j]);
                amax = amax > a ? amax : a;
            }
            float d = amax / 127;
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            int sum = 0;
            for (int j = 0; j < 16; j++) {
                byte q0 = (byte) (int) GgmlRounding.roundf(src[x + j] * id);
                byte q1 = (byte) (int) GgmlRounding.roundf(src[x + 16 + j] * id);
                dst.set(ValueLayout.JAVA_BYTE, blk + 4 + j, q0);
                dst.set(ValueLayout.JAVA_BYTE, blk + 4 + 16 + j, q1);
                sum += q0 + q1;
            }
            LittleEndian.putHalf(dst, blk + 2, sum * d);
        }
    }
}
