package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q4_K (8 sub-blocks of 32, 4-bit levels, 6-bit scales and mins). Without importance
 * {@code quantize_row_q4_K_ref} (core's {@link Q4_K#quantizeReference}); with it
 * {@code quantize_row_q4_K_impl}: {@code make_qkx3_quants(32, 15)} on
 * {@code qw·sqrt(2·sigma²+x²)}, scales and mins by {@code make_qp_quants(8, 63)}.
 */
public final class Q4_KQuantizer implements BlockQuantizer {
    static final Q4_KQuantizer INSTANCE = new Q4_KQuantizer();
    private static final int BYTES = 144, SCALES = 4, QS = 16;

    private Q4_KQuantizer() {}

    @Override public GgmlType type() { return GgmlType.Q4_K; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) {
            Q4_K.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
            return;
        }
        byte[] L = new byte[256];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            KSearch.weightedScalesMins(x, xb, qw, 256 * i, 15, dst, y, L, false);
            SuperBlocks.requantizeK4(x, xb, dst, y, y + SCALES, 15, L);
            SuperBlocks.packQ4K(L, dst, y + QS);
        }
    }
}
