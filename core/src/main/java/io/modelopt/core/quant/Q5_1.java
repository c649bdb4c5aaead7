package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q5_1}: 32 elements, {@code half d; half m; uint8 qh[4]; uint8 qs[16]}; the five
 * bits of each quant are laid out as in {@link Q5_0}; {@code x = d * q + m}.
 */
public final class Q5_1 {
    private Q5_1() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q5_1.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q5_1.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("m"),
            MemoryLayout.sequenceLayout(4, ValueLayout.JAVA_BYTE).withName("qh"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("qs"));

    /** As {@code dequantize_row_q5_1}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q5_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            float m = LittleEndian.half(src, blk + 2);
            int qh = src.get(LittleEndian.INT, blk + 4);
            int y = dstOffset + b * 32;
            for (int j = 0; j < 16; j++) {
                int xh0 = ((qh >>> j) << 4) & 0x10;
                int xh1 = (qh >>> (j + 12)) & 0x10;
                int q = LittleEndian.u8(src, blk + 8 + j);
                dst[y + j] = ((q & 0x0F) | xh0) * d + m;
                dst[y + j + 16] = ((q >>> 4) | xh1) * d + m;
            }
        }
    }

    /** As {@code quantize_row_q5_1_ref}: 32 levels from the block minimum to its maximum. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q5_1", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
            for (int j = 0; j < 32; j++) {
                float v = src[x + j];
                if (v < min) min = v;
                if (v > max) max = v;
            }
            float d = (max - min) / ((1 << 5) - 1);
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            LittleEndian.putHalf(dst, blk + 2, min);
            int qh = 0;
            for (int j = 0; j < 16; j++) {
                int xi0 = ((int) ((src[x + j] - min) * id + 0.5f)) & 0xFF;
                int xi1 = ((int) ((src[x + 16 + j] - min) * id + 0.5f)) & 0xFF;
                dst.set(ValueLayout.JAVA_BYTE, blk + 8 + j, (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4)));
                qh |= ((xi0 & 0x10) >>> 4) << j;
                qh |= ((xi1 & 0x10) >>> 4) << (j + 16);
            }
            dst.set(LittleEndian.INT, blk + 4, qh);
        }
    }
}
