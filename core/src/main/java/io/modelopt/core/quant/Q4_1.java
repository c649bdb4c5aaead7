package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q4_1}: 32 elements, {@code half d; half m; uint8 qs[16]}; nibbles as in
 * {@link Q4_0}; {@code x = d * q + m}.
 */
public final class Q4_1 {
    private Q4_1() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q4_1.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q4_1.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("m"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("qs"));

    /** As {@code dequantize_row_q4_1}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q4_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            float m = LittleEndian.half(src, blk + 2);
            int y = dstOffset + b * 32;
            for (int j = 0; j < 16; j++) {
                int q = LittleEndian.u8(src, blk + 4 + j);
                dst[y + j] = (q & 0x0F) * d + m;
                dst[y + j + 16] = (q >>> 4) * d + m;
            }
        }
    }

    /** As {@code quantize_row_q4_1_ref}: 16 levels from the block minimum to its maximum. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q4_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
            for (int j = 0; j < 32; j++) {
                float v = src[x + j];
                if (v < min) min = v;
                if (v > max) max = v;
            }
            float d = (max - min) / ((1 << 4) - 1);
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            LittleEndian.putHalf(dst, blk + 2, min);
            for (int j = 0; j < 16; j++) {
                int xi0 = Math.min(15, GgmlRounding.truncToInt8((src[x + j] - min) * id + 0.5f));
                int xi1 = Math.min(15, GgmlRounding.truncToInt8((src[x + 16 + j] - min) * id + 0.5f));
                dst.set(ValueLayout.JAVA_BYTE, blk + 4 + j, (byte) ((xi0 & 0xFF) | (xi1 << 4)));
            }
        }
    }
}
