package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.IQ4_NL;
import io.modelopt.core.tensor.GgmlType;

/**
 * IQ4_NL (32 elements, one half scale, 4-bit indices into ggml's non-linear table), as
 * {@code quantize_iq4_nl}, which llama-quantize calls with or without an importance matrix:
 * {@code quantize_row_iq4_nl_impl(32, 32, ..., ntry = 7)}, weights {@code qw·sqrt(sigma²+x²)}
 * ({@code sigma² = 2·mean(x²)} of the block) or {@code x²}, a 15-point scale search, then the
 * indices re-chosen against the stored scale. llama-quantize's fallback for Q2_K and Q3_K when a
 * row is not a multiple of 256.
 */
public final class IQ4_NLQuantizer implements BlockQuantizer {
    static final IQ4_NLQuantizer INSTANCE = new IQ4_NLQuantizer();
    private static final int NTRY = 7;
    private static final float[] VALUES = new float[16];
    static {
        for (int i = 0; i < 16; i++) VALUES[i] = IQ4_NL.value(i);
    }

    private IQ4_NLQuantizer() {}

    @Override public GgmlType type() { return GgmlType.IQ4_NL; }

    /** {@code best_index_int8}: the table entry nearest {@code x} (ties to the lower one by the strict {@code <}). */
    static int bestIndex(float x) {
        if (x <= VALUES[0]) return 0;
        if (x >= VALUES[15]) return 15;
        int ml = 0, mu = 15;
        while (mu - ml > 1) {
            int mav = (ml + mu) / 2;
            if (x < VALUES[mav]) mu = mav;
            else ml = mav;
        }
        return x - VALUES[mu - 1] < VALUES[mu] - x ? mu - 1 : mu;
    }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        float[] weight = new float[32];
        byte[] L = new byte[32];
        for (int ib = 0; ib < n / 32; ++ib) {
            int xb = xOff + 32 * ib, y = dstOff + 18 * ib;
            float sigma2 = 0;
            for (int j = 0; j < 32; ++j) sigma2 += x[xb + j] * x[xb + j];
            sigma2 *= 2.f / 32;
            if (qw != null) {
                for (int j = 0; j < 32; ++j) weight[j] = qw[32 * ib + j] * QuantSearch.sqrtf(sigma2 + x[xb + j] * x[xb + j]);
            } else {
                for (int j = 0; j < 32; ++j) weight[j] = x[xb + j] * x[xb + j];
            }
            float amax = 0, max = 0;
            for (int j = 0; j < 32; ++j) {
                float ax = Math.abs(x[xb + j]);
                if (ax > amax) {
                    amax = ax;
                    max = x[xb + j];
                }
            }
            float scale;
            if (amax < QuantSearch.GROUP_MAX_EPS) {
                scale = 0;
            } else {
                float d = -max / VALUES[0];
                float id = 1 / d;
                float sumqx = 0, sumq2 = 0;
                for (int j = 0; j < 32; ++j) {
                    int l = bestIndex(id * x[xb + j]);
                    float q = VALUES[l], w = weight[j];
                    sumqx += w * q * x[xb + j];
                    sumq2 += w * q * q;
                }
                d = sumqx / sumq2;
                float best = d * sumqx;
                for (int itry = -NTRY; itry <= NTRY; ++itry) {
                    id = (itry + (int) VALUES[0]) / max;
                    sumqx = sumq2 = 0;
                    for (int j = 0; j < 32; ++j) {
                        int l = bestIndex(id * x[xb + j]);
                        float q = VALUES[l], w = weight[j];
                        sumqx += w * q * x[xb + j];
                        sumq2 += w * q * q;
                    }
                    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                        d = sumqx / sumq2;
                        best = d * sumqx;
                    }
                }
                scale = d;
            }
            Bytes.putShort(dst, y, Bytes.half(scale));
            float id = scale != 0 ? 1 / scale : 0;
            for (int j = 0; j < 32; ++j) L[j] = (byte) bestIndex(id * x[xb + j]);
            for (int j = 0; j < 16; ++j) dst[y + 2 + j] = (byte) (L[j] | (L[16 + j] << 4));
        }
    }
}
