package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.Q4_1;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_1 ({@code d * q + m}): without importance {@code quantize_row_q4_1_ref} (min to max in 15
 * steps); with it {@code quantize_row_q4_1_impl}: {@code make_qkx3_quants(32, 15, -0.9, 0.05, 36)}.
 */
public final class Q4_1Quantizer implements BlockQuantizer {
    static final Q4_1Quantizer INSTANCE = new Q4_1Quantizer();

    private Q4_1Quantizer() {}

    @Override public GgmlType type() { return GgmlType.Q4_1; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) {
            Q4_1.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
            return;
        }
        float[] weight = new float[32];
        byte[] L = new byte[32], laux = new byte[32];
        float[] min = new float[1];
        float sigma2 = LegacyQuants.rowSigma2(x, xOff, n);
        for (int ib = 0; ib < n / 32; ++ib) {
            int xb = xOff + 32 * ib;
            LegacyQuants.weights(x, xb, qw, 32 * ib, sigma2, weight);
            float d = QuantSearch.makeQkx3Quants(32, 15, x, xb, weight, 0, L, 0, min, 0, laux, -0.9f, 0.05f, 36, false);
            int y = dstOff + ib * 20;
            Bytes.putShort(dst, y, Bytes.half(d));
            Bytes.putShort(dst, y + 2, Bytes.half(-min[0]));
            for (int j = 0; j < 16; ++j) dst[y + 4 + j] = (byte) (L[j] | (L[j + 16] << 4));
        }
    }
}
