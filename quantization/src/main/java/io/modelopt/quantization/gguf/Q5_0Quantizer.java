package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.Q5_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q5_0 ({@code d * (q - 16)}): without importance {@code quantize_row_q5_0_ref}
 * ({@code d = max/-16}); with it {@code quantize_row_q5_0_impl}: {@code make_qx_quants(32, 16)}.
 */
public final class Q5_0Quantizer implements BlockQuantizer {
    static final Q5_0Quantizer INSTANCE = new Q5_0Quantizer();

    private Q5_0Quantizer() {}

    @Override public GgmlType type() { return GgmlType.Q5_0; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) {
            Q5_0.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
            return;
        }
        float[] weight = new float[32];
        byte[] L = new byte[32];
        float sigma2 = LegacyQuants.rowSigma2(x, xOff, n);
        for (int ib = 0; ib < n / 32; ++ib) {
            int xb = xOff + 32 * ib;
            LegacyQuants.weights(x, xb, qw, 32 * ib, sigma2, weight);
            float d = QuantSearch.makeQxQuants(32, 16, x, xb, L, 0, 1, weight, 0);
            int y = dstOff + ib * 22;
            Bytes.putShort(dst, y, Bytes.half(d));
            Bytes.putInt(dst, y + 2, LegacyQuants.packFiveBits(L, dst, y + 6));
        }
    }
}
