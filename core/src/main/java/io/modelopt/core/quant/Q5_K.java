package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q5_K}: as {@link Q4_K} plus a fifth bit per element,
 * {@code half d; half dmin; uint8 scales[12]; uint8 qh[32]; uint8 qs[128]}. For the pair of
 * sub-blocks {@code 2p, 2p+1}, bit {@code 2p} of {@code qh[l]} is the fifth bit of element
 * {@code l} of the first and bit {@code 2p+1} that of the second.
 */
public final class Q5_K {
    private Q5_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q5_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q5_K.typeSize();
    public static final int D = 0, DMIN = 2, SCALES = 4, QH = 16, QS = 48;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("dmin"),
            MemoryLayout.sequenceLayout(12, ValueLayout.JAVA_BYTE).withName("scales"),
            MemoryLayout.sequenceLayout(32, ValueLayout.JAVA_BYTE).withName("qh"),
            MemoryLayout.sequenceLayout(128, ValueLayout.JAVA_BYTE).withName("qs"));

    public static int scaleMin(MemorySegment s, long blk, int j) {
        return KQuants.scaleMinK4(j, s, blk + SCALES);
    }

    /** As {@code dequantize_row_q5_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q5_K", n, BLOCK_ELEMENTS);
        int y = dstOffset;
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk + D);
            float min = LittleEndian.half(src, blk + DMIN);
            long ql = blk + QS, qh = blk + QH;
            int u1 = 1, u2 = 2;
            for (int is = 0; is < 8; is += 2) {
                int sm1 = scaleMin(src, blk, is), sm2 = scaleMin(src, blk, is + 1);
                float d1 = d * (sm1 & 0xFF), m1 = min * (sm1 >>> 8);
                float d2 = d * (sm2 & 0xFF), m2 = min * (sm2 >>> 8);
                for (int l = 0; l < 32; ++l) {
                    int h = (LittleEndian.u8(src, qh + l) & u1) != 0 ? 16 : 0;
                    dst[y++] = d1 * ((LittleEndian.u8(src, ql + l) & 0xF) + h) - m1;
                }
                for (int l = 0; l < 32; ++l) {
                    int h = (LittleEndian.u8(src, qh + l) & u2) != 0 ? 16 : 0;
                    dst[y++] = d2 * ((LittleEndian.u8(src, ql + l) >>> 4) + h) - m2;
                }
                ql += 32;
                u1 <<= 2;
                u2 <<= 2;
            }
        }
    }
}
