package io.modelopt.quantization.gguf;

import static io.modelopt.core.quant.GgmlRounding.nearestInt;

import io.modelopt.core.tensor.GgmlType;

/**
 * Q3_K (16 sub-blocks of 16, 3-bit symmetric levels, 6-bit signed scales). Without importance
 * {@code quantize_row_q3_K_ref}: {@code make_q3_quants(16, 4, rmse)} per sub-block, scales rounded
 * against the largest one ({@code -32/max}). With it {@code quantize_row_q3_K_impl}:
 * {@code make_qx_quants(16, 4)} on {@code qw·sqrt(2·sigma²+x²)}, then the scales by
 * {@code make_qx_quants(16, 32)} weighted by the sub-blocks' weight sums.
 */
public final class Q3_KQuantizer implements BlockQuantizer {
    static final Q3_KQuantizer INSTANCE = new Q3_KQuantizer();
    private static final int BYTES = 110, HMASK = 0, QS = 32, SCALES = 96, D = 108;

    private Q3_KQuantizer() {}

    @Override public GgmlType type() { return GgmlType.Q3_K; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) reference(x, xOff, n, dst, dstOff);
        else weighted(x, xOff, n, qw, dst, dstOff);
    }

    private static void reference(float[] x, int xOff, int n, byte[] dst, int dstOff) {
        byte[] L = new byte[256];
        float[] scales = new float[16];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            float maxScale = 0, amax = 0;
            for (int j = 0; j < 16; ++j) {
                scales[j] = QuantSearch.makeQ3Quants(16, 4, x, xb + 16 * j, L, 16 * j, true);
                float scale = Math.abs(scales[j]);
                if (scale > amax) {
                    amax = scale;
                    maxScale = scales[j];
                }
            }
            Bytes.zero(dst, y + SCALES, 12);
            short dh;
            if (maxScale != 0) {
                float iscale = -32.f / maxScale;
                for (int j = 0; j < 16; ++j) {
                    byte l = (byte) nearestInt(iscale * scales[j]);
                    putScale(dst, y, j, Math.max(-32, Math.min(31, l)) + 32);
                }
                dh = Bytes.half(1 / iscale);
            } else {
                dh = Bytes.half(0.f);
            }
            Bytes.putShort(dst, y + D, dh);
            finish(x, xb, dst, y, Bytes.fromHalf(dh), L);
        }
    }

    private static void weighted(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        byte[] L = new byte[256], ls = new byte[16];
        float[] scales = new float[16], weight = new float[16], sw = new float[16];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            float sigma2 = 2 * SuperBlocks.sumSquares(x, xb) / 256;
            for (int j = 0; j < 16; ++j) {
                int q = 256 * i + 16 * j;
                for (int l = 0; l < 16; ++l) {
                    float v = x[xb + 16 * j + l];
                    weight[l] = qw[q + l] * QuantSearch.sqrtf(sigma2 + v * v);
                }
                float sumw = 0;
                for (int l = 0; l < 16; ++l) sumw += weight[l];
                sw[j] = sumw;
                scales[j] = QuantSearch.makeQxQuants(16, 4, x, xb + 16 * j, L, 16 * j, 1, weight, 0);
            }
            Bytes.zero(dst, y + SCALES, 12);
            float dBlock = QuantSearch.makeQxQuants(16, 32, scales, 0, ls, 0, 1, sw, 0);
            for (int j = 0; j < 16; ++j) putScale(dst, y, j, ls[j]);
            short dh = Bytes.half(dBlock);
            Bytes.putShort(dst, y + D, dh);
            finish(x, xb, dst, y, Bytes.fromHalf(dh), L);
        }
    }

    /** Stores 6-bit scale {@code l} (0..63) of sub-block {@code j}: low nibble at {@code j} or {@code j-8}, top bits in bytes 8..11. */
    private static void putScale(byte[] dst, int y, int j, int l) {
        if (j < 8) dst[y + SCALES + j] = (byte) (l & 0xF);
        else dst[y + SCALES + j - 8] |= (byte) ((l & 0xF) << 4);
        l >>= 4;
        dst[y + SCALES + j % 4 + 8] |= (byte) (l << (2 * (j / 4)));
    }

    /** Final levels from the stored scales, then the high-bit mask and the 2-bit quants. */
    private static void finish(float[] x, int xb, byte[] dst, int y, float d0, byte[] L) {
        for (int j = 0; j < 16; ++j) {
            int lo = j < 8 ? dst[y + SCALES + j] & 0xF : (dst[y + SCALES + j - 8] & 0xFF) >>> 4;
            int sc = (byte) ((lo | ((((dst[y + SCALES + 8 + j % 4] & 0xFF) >>> (2 * (j / 4))) & 3) << 4)) - 32);
            float d = d0 * sc;
            if (d == 0) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearestInt(x[xb + 16 * j + ii] / d);
                L[16 * j + ii] = (byte) (Math.max(-4, Math.min(3, l)) + 4);
            }
        }
        Bytes.zero(dst, y + HMASK, 32);
        int m = 0, hm = 1;
        for (int j = 0; j < 256; ++j) {
            if (L[j] > 3) {
                dst[y + HMASK + m] |= (byte) hm;
                L[j] -= 4;
            }
            if (++m == 32) {
                m = 0;
                hm <<= 1;
            }
        }
        SuperBlocks.packTwoBits(L, dst, y + QS);
    }
}
