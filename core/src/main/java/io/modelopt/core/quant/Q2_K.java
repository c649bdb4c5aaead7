package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q2_K}: 256 elements in 16 sub-blocks of 16,
 * {@code uint8 scales[16]; uint8 qs[64]; half d; half dmin}. Byte {@code scales[j]} holds sub-block
 * {@code j}'s 4-bit scale (low nibble) and 4-bit min (high nibble); {@code x = d*sc*q - dmin*m}.
 * Each 128-element half uses 32 bytes of {@code qs}: element {@code 32*s + l} of the half
 * ({@code s} = 0..3, {@code l} = 0..31) is bits {@code 2s, 2s+1} of {@code qs[l]}.
 */
public final class Q2_K {
    private Q2_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q2_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q2_K.typeSize();
    /** Byte offsets of the fields in a block. */
    public static final int SCALES = 0, QS = 16, D = 80, DMIN = 82;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("scales"),
            MemoryLayout.sequenceLayout(64, ValueLayout.JAVA_BYTE).withName("qs"),
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("dmin"));

    /** As {@code dequantize_row_q2_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q2_K", n, BLOCK_ELEMENTS);
        int y = dstOffset;
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk + D);
            float min = LittleEndian.half(src, blk + DMIN);
            long q = blk + QS;
            int is = 0;
            for (int half = 0; half < 2; half++) {
                for (int shift = 0; shift < 8; shift += 2) {
                    int sc = LittleEndian.u8(src, blk + SCALES + is++);
                    float dl = d * (sc & 0xF), ml = min * (sc >>> 4);
                    for (int l = 0; l < 16; ++l) dst[y++] = dl * ((LittleEndian.u8(src, q + l) >>> shift) & 3) - ml;
                    sc = LittleEndian.u8(src, blk + SCALES + is++);
                    dl = d * (sc & 0xF);
                    ml = min * (sc >>> 4);
                    for (int l = 0; l < 16; ++l) dst[y++] = dl * ((LittleEndian.u8(src, q + l + 16) >>> shift) & 3) - ml;
                }
                q += 32;
            }
        }
    }
}
