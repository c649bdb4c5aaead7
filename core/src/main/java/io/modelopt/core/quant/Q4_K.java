package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * {@code block_q4_K}: a 256-element super-block of 8 sub-blocks of 32,
 * {@code half d; half dmin; uint8 scales[12]; uint8 qs[128]}. Sub-block {@code j} has a 6-bit
 * scale {@code sc} and min {@code m} (see {@code get_scale_min_k4}); {@code x = d*sc*q - dmin*m}.
 * Each 32 bytes of {@code qs} hold two sub-blocks: low nibbles the first, high nibbles the second.
 */
public final class Q4_K {
    private Q4_K() {}

    public static final int BLOCK_ELEMENTS = GgmlType.Q4_K.blockSize();
    public static final int BLOCK_BYTES = GgmlType.Q4_K.typeSize();
    /** Byte offsets of the fields in a block. */
    public static final int D = 0, DMIN = 2, SCALES = 4, QS = 16;
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            LittleEndian.SHORT.withName("d"),
            LittleEndian.SHORT.withName("dmin"),
            MemoryLayout.sequenceLayout(12, ValueLayout.JAVA_BYTE).withName("scales"),
            MemoryLayout.sequenceLayout(128, ValueLayout.JAVA_BYTE).withName("qs"));

    /** Sub-block {@code j}'s 6-bit scale (low byte) and min (second byte) of the block at {@code blk}. */
    public static int scaleMin(MemorySegment s, long blk, int j) {
        return KQuants.scaleMinK4(j, s, blk + SCALES);
    }

    /** As {@code dequantize_row_q4_K}. */
    public static void dequantize(MemorySegment src, long byteOffset, float[] dst, int dstOffset, int n) {
        LittleEndian.checkBlocks("Q4_K", n, BLOCK_ELEMENTS);
        int y = dstOffset;
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            long blk = byteOffset + (long) b * BLOCK_BYTES;
            float d = LittleEndian.half(src, blk + D);
            float min = LittleEndian.half(src, blk + DMIN);
            long q = blk + QS;
            for (int is = 0; is < 8; is += 2) {
                int sm1 = scaleMin(src, blk, is), sm2 = scaleMin(src, blk, is + 1);
                float d1 = d * (sm1 & 0xFF), m1 = min * (sm1 >>> 8);
                float d2 = d * (sm2 & 0xFF), m2 = min * (sm2 >>> 8);
                for (int l = 0; l < 32; ++l) dst[y++] = d1 * (LittleEndian.u8(src, q + l) & 0xF) - m1;
                for (int l = 0; l < 32; ++l) dst[y++] = d2 * (LittleEndian.u8(src, q + l) >>> 4) - m2;
                q += 32;
            }
        }
    }

    /** As {@code quantize_row_q4_K_ref} (what llama-quantize writes without an importance matrix). */
    public static void quantizeReference(float[] src, int off, int n, MemorySegment dst, long dstOff) {
        LittleEndian.checkBlocks("Q4_K", n, BLOCK_ELEMENTS);
        byte[] L = new byte[256];
        byte[] laux = new byte[32];
        float[] weights = new float[32];
        float[] mins = new float[8];
        float[] scales = new float[8];
        byte[] packed = new byte[12];
        for (int b = 0; b < n / BLOCK_ELEMENTS; b++) {
            int x = off + b * 256;
            long blk = dstOff + (long) b * BLOCK_BYTES;
            float maxScale = 0, maxMin = 0;
            for (int j = 0; j < 8; ++j) {
                float sumX2 = 0;
                for (int l = 0; l < 32; ++l) sumX2 += src[x + 32 * j + l] * src[x + 32 * j + l];
                float avX = (float) Math.sqrt(sumX2 / 32);
                for (int l = 0; l < 32; ++l) weights[l] = avX + Math.abs(src[x + 32 * j + l]);
                scales[j] = KQuants.makeQkx2Quants(32, 15, src, x + 32 * j, weights, L, 32 * j, mins, j, laux, -1.f, 0.1f, 20, false);
                if (scales[j] > maxScale) maxScale = scales[j];
                if (mins[j] > maxMin) maxMin = mins[j];
            }
            float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
            float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
            java.util.Arrays.fill(packed, (byte) 0);
            for (int j = 0; j < 8; ++j) {
                int ls = Math.min(63, GgmlRounding.nearestInt(invScale * scales[j]) & 0xFF);
                int lm = Math.min(63, GgmlRounding.nearestInt(invMin * mins[j]) & 0xFF);
                if (j < 4) {
                    packed[j] = (byte) ls;
                    packed[j + 4] = (byte) lm;
                } else {
                    packed[j + 4] = (byte) ((ls & 0xF) | ((lm & 0xF) << 4));
                    packed[j - 4] |= (byte) ((ls >>> 4) << 6);
                    packed[j] |= (byte) ((lm >>> 4) << 6);
                }
            }
            short dh = Float.floatToFloat16(maxScale / 63.f);
            short dminh = Float.floatToFloat16(maxMin / 63.f);
            for (int j = 0; j < 8; ++j) {
                int sm = KQuants.scaleMinK4(j, packed);
                float d = Float.float16ToFloat(dh) * (sm & 0xFF);
                if (d == 0) continue;
                float dm = Float.float16ToFloat(dminh) * (sm >>> 8);
                for (int ii = 0; ii < 32; ++ii) {
                    int l = GgmlRounding.nearestInt((src[x + 32 * j + ii] + dm) / d);
                    L[32 * j + ii] = (byte) Math.max(0, Math.min(15, l));
                }
            }
            dst.set(LittleEndian.SHORT, blk + D, dh);
            dst.set(LittleEndian.SHORT, blk + DMIN, dminh);
            MemorySegment.copy(packed, 0, dst, ValueLayout.JAVA_BYTE, blk + SCALES, 12);
            for (int j = 0, q = 0; j < 256; j += 64, q += 32) {
                for (int l = 0; l < 32; ++l) {
                    dst.set(ValueLayout.JAVA_BYTE, blk + QS + q + l, (byte) (L[j + l] | (L[j + l + 32] << 4)));
                }
            }
        }
    }
}
