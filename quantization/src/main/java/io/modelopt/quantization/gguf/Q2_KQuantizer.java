package io.modelopt.quantization.gguf;

import static io.modelopt.core.quant.GgmlRounding.nearestInt;

import io.modelopt.core.tensor.GgmlType;

/**
 * Q2_K (16 sub-blocks of 16, 2-bit levels, 4-bit scales and mins). Without importance
 * {@code quantize_row_q2_K_ref}: {@code make_qkx2_quants(16, 3)} on {@code |x|} weights with the
 * absolute-error criterion, scales and mins rounded to {@code 0..15} of their maxima. With it
 * {@code quantize_row_q2_K_impl}: {@code make_qkx3_quants(16, 3)} on {@code qw·sqrt(sigma²+x²)},
 * then the scales and mins themselves by {@code make_qp_quants(16, 15)} weighted by the
 * sub-blocks' weight sums.
 */
public final class Q2_KQuantizer implements BlockQuantizer {
    static final Q2_KQuantizer INSTANCE = new Q2_KQuantizer();
    private static final int BYTES = 84, SCALES = 0, QS = 16, D = 80, DMIN = 82;

    private Q2_KQuantizer() {}

    @Override public GgmlType type() { return GgmlType.Q2_K; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) reference(x, xOff, n, dst, dstOff);
        else weighted(x, xOff, n, qw, dst, dstOff);
    }

    private static void reference(float[] x, int xOff, int n, byte[] dst, int dstOff) {
        byte[] L = new byte[256], laux = new byte[16];
        float[] weights = new float[16], mins = new float[16], scales = new float[16];
        final float q4scale = 15.f;
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            float maxScale = 0, maxMin = 0;
            for (int j = 0; j < 16; ++j) {
                for (int l = 0; l < 16; ++l) weights[l] = Math.abs(x[xb + 16 * j + l]);
                scales[j] = QuantSearch.makeQkx2Quants(16, 3, x, xb + 16 * j, weights, 0, L, 16 * j, mins, j, laux, -0.5f, 0.1f, 15, true);
                if (scales[j] > maxScale) maxScale = scales[j];
                if (mins[j] > maxMin) maxMin = mins[j];
            }
            short dh, dminh;
            if (maxScale > 0) {
                float iscale = q4scale / maxScale;
                for (int j = 0; j < 16; ++j) dst[y + SCALES + j] = (byte) nearestInt(iscale * scales[j]);
                dh = Bytes.half(maxScale / q4scale);
            } else {
                Bytes.zero(dst, y + SCALES, 16);
                dh = Bytes.half(0.f);
            }
            if (maxMin > 0) {
                float iscale = q4scale / maxMin;
                for (int j = 0; j < 16; ++j) dst[y + SCALES + j] |= (byte) (nearestInt(iscale * mins[j]) << 4);
                dminh = Bytes.half(maxMin / q4scale);
            } else {
                dminh = Bytes.half(0.f);
            }
            Bytes.putShort(dst, y + D, dh);
            Bytes.putShort(dst, y + DMIN, dminh);
            requantize(x, xb, dst, y, Bytes.fromHalf(dh), Bytes.fromHalf(dminh), L);
            SuperBlocks.packTwoBits(L, dst, y + QS);
        }
    }

    private static void weighted(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        byte[] L = new byte[256], laux = new byte[16], ls = new byte[16], lm = new byte[16];
        float[] mins = new float[16], scales = new float[16], sw = new float[16], weight = new float[16];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            java.util.Arrays.fill(sw, 0);
            float sigma2 = SuperBlocks.sumSquares(x, xb) / 256;
            for (int j = 0; j < 16; ++j) {
                int q = 256 * i + 16 * j;
                for (int l = 0; l < 16; ++l) {
                    float v = x[xb + 16 * j + l];
                    weight[l] = qw[q + l] * QuantSearch.sqrtf(sigma2 + v * v);
                }
                for (int l = 0; l < 16; ++l) sw[j] += weight[l];
                scales[j] = QuantSearch.makeQkx3Quants(16, 3, x, xb + 16 * j, weight, 0, L, 16 * j, mins, j, laux, -0.9f, 0.05f, 36, false);
            }
            float dm = QuantSearch.makeQpQuants(16, 15, scales, 0, ls, 0, sw, 0);
            float mm = QuantSearch.makeQpQuants(16, 15, mins, 0, lm, 0, sw, 0);
            short dh = Bytes.half(dm), mh = Bytes.half(mm);
            Bytes.putShort(dst, y + D, dh);
            Bytes.putShort(dst, y + DMIN, mh);
            for (int j = 0; j < 16; ++j) dst[y + SCALES + j] = (byte) ((ls[j] & 0xFF) | ((lm[j] & 0xFF) << 4));
            requantize(x, xb, dst, y, Bytes.fromHalf(dh), Bytes.fromHalf(mh), L);
            SuperBlocks.packTwoBits(L, dst, y + QS);
        }
    }

    /** Levels from the stored scales: {@code nearest_int((x + dmin*m)/(d*sc))} in {@code 0..3}; zero-scale sub-blocks keep theirs. */
    private static void requantize(float[] x, int xb, byte[] dst, int y, float d0, float m0, byte[] L) {
        for (int j = 0; j < 16; ++j) {
            int sc = dst[y + SCALES + j] & 0xFF;
            float d = d0 * (sc & 0xF);
            if (d == 0) continue;
            float dm = m0 * (sc >>> 4);
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearestInt((x[xb + 16 * j + ii] + dm) / d);
                L[16 * j + ii] = (byte) Math.max(0, Math.min(3, l));
            }
        }
    }
}
