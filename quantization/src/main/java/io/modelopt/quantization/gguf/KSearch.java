package io.modelopt.quantization.gguf;

import static io.modelopt.core.quant.GgmlRounding.nearestInt;

/** The scale/min searches of the Q4_K and Q5_K quantizers (8 sub-blocks of 32 with 6-bit scales and mins). */
final class KSearch {
    private KSearch() {}

    /**
     * {@code quantize_row_q{4,5}_K_impl} up to the stored scales: per sub-block
     * {@code make_qkx3_quants(32, nmax, -0.9, 0.05, 36)} with weights {@code qw·sqrt(sigma²+x²)}
     * ({@code sigma² = 2·mean(x²)} of the super-block), then {@code make_qp_quants(8, 63)} for the
     * scales and the mins weighted by the sub-blocks' weight sums. Writes {@code d}, {@code dmin}
     * and the 12 scale bytes of the block at {@code y}; the search levels go to {@code L}.
     * {@code clampTo63} is Q5_K's extra {@code MIN(63, ...)} on the 6-bit values.
     */
    static void weightedScalesMins(float[] x, int xb, float[] qw, int qwo, int nmax, byte[] dst, int y, byte[] L, boolean clampTo63) {
        float[] weights = new float[32], sw = new float[8], mins = new float[8], scales = new float[8];
        byte[] laux = new byte[32], ls = new byte[8], lm = new byte[8];
        float sigma2 = 2 * SuperBlocks.sumSquares(x, xb) / 256;
        for (int j = 0; j < 8; ++j) {
            int q = qwo + 32 * j;
            for (int l = 0; l < 32; ++l) {
                float v = x[xb + 32 * j + l];
                weights[l] = qw[q + l] * QuantSearch.sqrtf(sigma2 + v * v);
            }
            float sumw = 0;
            for (int l = 0; l < 32; ++l) sumw += weights[l];
            sw[j] = sumw;
            scales[j] = QuantSearch.makeQkx3Quants(32, nmax, x, xb + 32 * j, weights, 0, L, 32 * j, mins, j, laux, -0.9f, 0.05f, 36, false);
        }
        float dBlock = QuantSearch.makeQpQuants(8, 63, scales, 0, ls, 0, sw, 0);
        float mBlock = QuantSearch.makeQpQuants(8, 63, mins, 0, lm, 0, sw, 0);
        int[] s = new int[8], m = new int[8];
        for (int j = 0; j < 8; ++j) {
            s[j] = ls[j] & 0xFF;
            m[j] = lm[j] & 0xFF;
            if (clampTo63) {
                s[j] = Math.min(63, s[j]);
                m[j] = Math.min(63, m[j]);
            }
        }
        packAndStore(dst, y, s, m, dBlock, mBlock);
    }

    /**
     * {@code quantize_row_q{4,5}_K_ref} up to the stored scales: per sub-block
     * {@code make_qkx2_quants(32, nmax)} with weights {@code sqrt(mean(x²)) + |x|}, then the
     * scales and mins as {@code nearest_int(63/max · v)} capped at 63.
     */
    static void referenceScalesMins(float[] x, int xb, int nmax, float rmin, float rdelta, int nstep, byte[] dst, int y, byte[] L) {
        float[] weights = new float[32], mins = new float[8], scales = new float[8];
        byte[] laux = new byte[32];
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < 8; ++j) {
            float sumX2 = 0;
            for (int l = 0; l < 32; ++l) sumX2 += x[xb + 32 * j + l] * x[xb + 32 * j + l];
            float avX = QuantSearch.sqrtf(sumX2 / 32);
            for (int l = 0; l < 32; ++l) weights[l] = avX + Math.abs(x[xb + 32 * j + l]);
            scales[j] = QuantSearch.makeQkx2Quants(32, nmax, x, xb + 32 * j, weights, 0, L, 32 * j, mins, j, laux, rmin, rdelta, nstep, false);
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
        float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
        int[] s = new int[8], m = new int[8];
        for (int j = 0; j < 8; ++j) {
            s[j] = Math.min(63, nearestInt(invScale * scales[j]) & 0xFF);
            m[j] = Math.min(63, nearestInt(invMin * mins[j]) & 0xFF);
        }
        packAndStore(dst, y, s, m, maxScale / 63.f, maxMin / 63.f);
    }

    private static void packAndStore(byte[] dst, int y, int[] s, int[] m, float d, float dmin) {
        Bytes.zero(dst, y + 4, 12);
        SuperBlocks.packScaleMinK4(s, m, dst, y + 4);
        Bytes.putShort(dst, y, Bytes.half(d));
        Bytes.putShort(dst, y + 2, Bytes.half(dmin));
    }
}
