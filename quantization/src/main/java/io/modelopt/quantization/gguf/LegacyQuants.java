package io.modelopt.quantization.gguf;

/** What the importance-weighted paths of the 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1) share. */
final class LegacyQuants {
    private LegacyQuants() {}

    /** {@code sigma2 = sum(x²) / n_per_row} over the whole row, summed in order. */
    static float rowSigma2(float[] x, int off, int n) {
        float sumX2 = 0;
        for (int j = 0; j < n; ++j) sumX2 += x[off + j] * x[off + j];
        return sumX2 / n;
    }

    /** {@code weight[j] = qw[j] * sqrtf(sigma2 + x[j]²)} for the 32 values of a block. */
    static void weights(float[] x, int xb, float[] qw, int qwo, float sigma2, float[] weight) {
        for (int j = 0; j < 32; ++j) weight[j] = qw[qwo + j] * QuantSearch.sqrtf(sigma2 + x[xb + j] * x[xb + j]);
    }

    /** Packs 32 five-bit levels as {@code qs[16]} nibbles and the 32-bit {@code qh} of fifth bits; returns qh. */
    static int packFiveBits(byte[] L, byte[] dst, int qsOff) {
        int qh = 0;
        for (int j = 0; j < 16; ++j) {
            int xi0 = L[j] & 0xFF, xi1 = L[j + 16] & 0xFF;
            dst[qsOff + j] = (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
            qh |= ((xi0 & 0x10) >>> 4) << j;
            qh |= ((xi1 & 0x10) >>> 4) << (j + 16);
        }
        return qh;
    }
}
