package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q5_0}: 32 elements, {@code half d; uint8 qh[4]; uint8 qs[16]}. The low four bits
 * are nibbles as in {@link Q4_0}; bit {@code j} of the little-endian 32-bit {@code qh} is the fifth
 * bit of element {@code j}; {@code x = d * (q - 16)}.
 */
public final class Q5_0 {
    private Q5_0() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q5_0.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q5_0.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            MemoryLayout.sequenceLayout(4, ValueLayout.JAVA_BYTE).withName("qh"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("qs"));

    /** As {@code dequantize_row_q5_0}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q5_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            int qh = src.get(LittleEndian.INT, blk + 2);
            int y = dstOffset + b * 32;
            for (int j = 0; j < 16; j++) {
                int xh0 = ((qh >>> j) << 4) & 0x10;
                int xh1 = (qh >>> (j + 12)) & 0x10;
                int q = LittleEndian.u8(src, blk + 6 + j);
                dst[y + j] = (((q & 0x0F) | xh0) - 16) * d;
                dst[y + j + 16] = (((q >>> 4) | xh1) - 16) * d;
            }
        }
    }

    /** As {@code quantize_row_q5_0_ref}: {@code d = max / -16}. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q5_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 32;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float amax = 0.0f, max = 0.0f;
            for (int j = 0; j < 32; j++) {
                float v = src[x + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -16;
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            int qh = 0;
            for (int j = 0; j < 16; j++) {
                int xi0 = Math.min(31, GgmlRounding.truncToInt8(src[x + j] * id + 16.5f)) & 0xFF;
                int xi1 = Math.min(31, GgmlRounding.truncToInt8(src[x + 16 + j] * id + 16.5f)) & 0xFF;
                dst.set(ValueLayout.JAVA_BYTE, blk + 6 + j, (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4)));
                qh |= ((xi0 & 0x10) >>> 4) << j;
                qh |= ((xi1 & 0x10) >>> 4) << (j + 16);
            }
            dst.set(LittleEndian.INT, blk + 2, qh);
        }
    }
}
