package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q6_K}: 256 elements in 16 sub-blocks of 16,
 * {@code uint8 ql[128]; uint8 qh[64]; int8 scales[16]; half d}; {@code x = d * sc * (q - 32)}.
 * Each 128-element half uses 64 bytes of {@code ql} and 32 of {@code qh}: for {@code l < 32},
 * elements {@code l, l+32, l+64, l+96} take the low nibble of {@code ql[l]}, of {@code ql[l+32]},
 * the high nibble of {@code ql[l]}, of {@code ql[l+32]}, and bit pairs 0,2,4,6 of {@code qh[l]}.
 */
public final class Q6_K {
    private Q6_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q6_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q6_K.typeSize();
    public static final int QL = 0, QH = 128, SCALES = 192, D = 208;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(128, ValueLayout.JAVA_BYTE).withName("ql"),
            MemoryLayout.sequenceLayout(64, ValueLayout.JAVA_BYTE).withName("qh"),
            MemoryLayout.sequenceLayout(16, ValueLayout.JAVA_BYTE).withName("scales"),
            LittleEndian.SHORT.withName("d"));

    /** As {@code dequantize_row_q6_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q6_K", n, BLOCK_ELEMENTS);
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk + D);
            long ql = blk + QL, qh = blk + QH, sc = blk + SCALES;
            int y = dstOffset + b * 256;
            for (int half = 0; half < 2; half++) {
                for (int l = 0; l < 32; ++l) {
                    int is = l / 16;
                    int h = LittleEndian.u8(src, qh + l);
                    int lo = LittleEndian.u8(src, ql + l), hi = LittleEndian.u8(src, ql + l + 32);
                    int q1 = ((lo & 0xF) | ((h & 3) << 4)) - 32;
                    int q2 = ((hi & 0xF) | (((h >>> 2) & 3) << 4)) - 32;
                    int q3 = ((lo >>> 4) | (((h >>> 4) & 3) << 4)) - 32;
                    int q4 = ((hi >>> 4) | (((h >>> 6) & 3) << 4)) - 32;
                    dst[y + l] = d * src.get(ValueLayout.JAVA_BYTE, sc + is) * q1;
                    dst[y + l + 32] = d * src.get(ValueLayout.JAVA_BYTE, sc + is + 2) * q2;
                    dst[y + l + 64] = d * src.get(ValueLayout.JAVA_BYTE, sc + is + 4) * q3;
                    dst[y + l + 96] = d * src.get(ValueLayout.JAVA_BYTE, sc + is + 6) * q4;
                }
                y += 128;
                ql += 64;
                qh += 32;
                sc += 8;
            }
        }
    }

    /** As {@code quantize_row_q6_K_ref} (what llama-quantize writes without an importance matrix). */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q6_K", n, BLOCK_ELEMENTS);
        byte[] L = new byte[256];
        float[] scales = new float[16];
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 256;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float maxScale = 0, maxAbsScale = 0;
            for (int ib = 0; ib < 16; ++ib) {
                float scale = KQuants.makeQxQuantsRmse1(16, 32, src, x + 16 * ib, L, 16 * ib);
                scales[ib] = scale;
                float abs = Math.abs(scale);
                if (abs > maxAbsScale) {
                    maxAbsScale = abs;
                    maxScale = scale;
                }
            }
            if (maxAbsScale < 1e-15f) {
                dst.asSlice(blk, BLOCK_BYTES).fill((byte) 0);
                continue;
            }
            float iscale = -128.f / maxScale;
            short dh = Float.floatToFloat16(1 / iscale);
            dst.set(LittleEndian.SHORT, blk + D, dh);
            byte[] sc = new byte[16];
            for (int ib = 0; ib < 16; ++ib) {
                sc[ib] = (byte) Math.min(127, GgmlRounding.nearestInt(iscale * scales[ib]));
                dst.set(ValueLayout.JAVA_BYTE, blk + SCALES + ib, sc[ib]);
            }
            for (int j = 0; j < 16; ++j) {
                float d = Float.float16ToFloat(dh) * sc[j];
                if (d == 0) continue;
                for (int ii = 0; ii < 16; ++ii) {
                    int l = GgmlRounding.nearestInt(src[x + 16 * j + ii] / d);
                    L[16 * j + ii] = (byte) (Math.max(-32, Math.min(31, l)) + 32);
                }
            }
            long ql = blk + QL, qh = blk + QH;
            for (int j = 0; j < 256; j += 128) {
                for (int l = 0; l < 32; ++l) {
                    int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF, q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
                    dst.set(ValueLayout.JAVA_BYTE, ql + l, (byte) (q1 | (q3 << 4)));
                    dst.set(ValueLayout.JAVA_BYTE, ql + l + 32, (byte) (q2 | (q4 << 4)));
                    dst.set(ValueLayout.JAVA_BYTE, qh + l, (byte) ((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2)
                            | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6)));
                }
                ql += 64;
                qh += 32;
            }
        }
    }
}
