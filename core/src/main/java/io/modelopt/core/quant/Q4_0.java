package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q4_0}: 32 elements, {@code half d; uint8 qs[16]}. Element {@code j < 16} is the
 * low nibble of {@code qs[j]}, element {@code j + 16} its high nibble; {@code x = d * (q - 8)}.
 */
public final class Q4_0 {
    private Q4_0() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q4_0.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q4_0.typeSize();
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("qs"));

    /** As {@code dequantize_row_q4_0}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q4_0", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk);
            int y = dstOffset + b * 32;
            for (int j = 0; j < 16; j++) {
                int q = LittleEndian.u8(src, blk + 2 + j);
                dst[y + j] = ((q & 0x0F) - 8) * d;
                dst[y + j + 16] = ((q >>> 4) - 8) * d;
            }
        }
    }

    /** As {@code quantize_row_q4_0_ref}: {@code d = max / -8} where max is the value of largest magnitude. */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q4_0", n, BLOCK_ELEMENTS);
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
            float d = max / -8;
            float id = d != 0 ? 1.0f / d : 0.0f;
            LittleEndian.putHalf(dst, blk, d);
            for (int j = 0; j < 16; j++) {
                int xi0 = Math.min(15, GgmlRounding.truncToInt8(src[x + j] * id + 8.5f));
                int xi1 = Math.min(15, GgmlRounding.truncToInt8(src[x + 16 + j] * id + 8.5f));
                dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) ((xi0 & 0xFF) | (xi1 << 4)));
            }
        }
    }
}
