package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q3_K}: 256 elements in 16 sub-blocks of 16,
 * {@code uint8 hmask[32]; uint8 qs[64]; uint8 scales[12]; half d}; {@code x = d * (sc - 32) * (q - 4)}
 * with a 6-bit scale {@code sc} per sub-block and a 3-bit {@code q}. The low two bits of {@code q}
 * are laid out as in {@link Q2_K}; the third bit of element {@code 32*s + l} of half {@code h} is bit
 * {@code 4h + s} of {@code hmask[l]}. Scale {@code j}: low nibble of {@code scales[j]} (j &lt; 8) or
 * high nibble of {@code scales[j-8]}, plus bits {@code 2(j/4), 2(j/4)+1} of {@code scales[8 + j%4]}
 * as its top two bits.
 */
public final class Q3_K {
    private Q3_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q3_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q3_K.typeSize();
    /** Byte offsets of the fields in a block. */
    public static final int HMASK = 0, QS = 32, SCALES = 96, D = 108;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(32, ValueLayout.JAVA_BYTE).withName("hmask"),
            MemoryLayout.sequenceLayout(64, ValueLayout.JAVA_BYTE).withName("qs"),
            MemoryLayout.sequenceLayout(12, ValueLayout.JAVA_BYTE).withName("scales"),
            LittleEndian.SHORT.withName("d"));

    /** Sub-block {@code j}'s (0..15) 6-bit scale, 0..63 (the decoder subtracts 32), from the block at {@code blk}. */
    public static int scale(MemorySegment s, long blk, int j) {
        long sc = blk + SCALES;
        int low = j < 8 ? LittleEndian.u8(s, sc + j) & 0xF : LittleEndian.u8(s, sc + j - 8) >>> 4;
        int high = (LittleEndian.u8(s, sc + 8 + j % 4) >>> (2 * (j / 4))) & 3;
        return low | (high << 4);
    }

    /** As {@code dequantize_row_q3_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q3_K", n, BLOCK_ELEMENTS);
        int y = dstOffset;
        int[] scales = new int[16];
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float dAll = LittleEndian.half(src, blk + D);
            for (int j = 0; j < 16; j++) scales[j] = scale(src, blk, j) - 32;
            long q = blk + QS, hm = blk + HMASK;
            int m = 1;
            int is = 0;
            for (int half = 0; half < 2; half++) {
                for (int shift = 0; shift < 8; shift += 2) {
                    float dl = dAll * scales[is++];
                    for (int l = 0; l < 16; ++l) {
                        int v = ((LittleEndian.u8(src, q + l) >>> shift) & 3) - ((LittleEndian.u8(src, hm + l) & m) != 0 ? 0 : 4);
                        dst[y++] = dl * v;
                    }
                    dl = dAll * scales[is++];
                    for (int l = 0; l < 16; ++l) {
                        int v = ((LittleEndian.u8(src, q + l + 16) >>> shift) & 3) - ((LittleEndian.u8(src, hm + l + 16) & m) != 0 ? 0 : 4);
                        dst[y++] = dl * v;
                    }
                    m <<= 1;
                }
                q += 32;
            }
        }
    }
}
