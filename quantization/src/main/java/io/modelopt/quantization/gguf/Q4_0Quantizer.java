package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_0 ({@code d * (q - 8)}): without importance {@code quantize_row_q4_0_ref}
 * ({@code d = max/-8}); with it {@code quantize_row_q4_0_impl}: weights
 * {@code qw * sqrt(sigma² + x²)} with sigma² the row's mean square, {@code make_qx_quants(32, 8)}.
 */
public final class Q4_0Quantizer implements BlockQuantizer {
    static final Q4_0Quantizer INSTANCE = new Q4_0Quantizer();

    private Q4_0Quantizer() {}

    @Override public GgmlType type() { return GgmlType.Q4_0; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) {
            Q4_0.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
            return;
        }
        float[] weight = new float[32];
        byte[] L = new byte[32];
        float sigma2 = LegacyQuants.rowSigma2(x, xOff, n);
        for (int ib = 0; ib < n / 32; ++ib) {
            int xb = xOff + 32 * ib;
            LegacyQuants.weights(x, xb, qw, 32 * ib, sigma2, weight);
            float d = QuantSearch.makeQxQuants(32, 8, x, xb, L, 0, 1, weight, 0);
            int y = dstOff + ib * 18;
            Bytes.putShort(dst, y, Bytes.half(d));
            for (int j = 0; j < 16; ++j) dst[y + 2 + j] = (byte) (L[j] | (L[j + 16] << 4));
        }
    }
}
