package io.modelopt.quantization.gguf;

import io.modelopt.core.tensor.GgmlType;

/**
 * Q5_K (8 sub-blocks of 32, 5-bit levels, 6-bit scales and mins). Without importance
 * {@code quantize_row_q5_K_ref}: {@code make_qkx2_quants(32, 31, -0.5, 0.1, 15)}; with it
 * {@code quantize_row_q5_K_impl}: as {@link Q4_KQuantizer} with 31 levels.
 */
public final class Q5_KQuantizer implements BlockQuantizer {
    static final Q5_KQuantizer INSTANCE = new Q5_KQuantizer();
    private static final int BYTES = 176, SCALES = 4, QH = 16, QS = 48;

    private Q5_KQuantizer() {}

    @Override public GgmlType type() { return GgmlType.Q5_K; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        byte[] L = new byte[256];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            if (qw == null) KSearch.referenceScalesMins(x, xb, 31, -0.5f, 0.1f, 15, dst, y, L);
            else KSearch.weightedScalesMins(x, xb, qw, 256 * i, 31, dst, y, L, true);
            SuperBlocks.requantizeK4(x, xb, dst, y, y + SCALES, 31, L);
            SuperBlocks.packQ5K(L, dst, y + QH, y + QS);
        }
    }
}
