package io.modelopt.quantization.gguf;

import static io.modelopt.core.quant.GgmlRounding.nearestInt;

import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * Q6_K (16 sub-blocks of 16, 6-bit levels, 8-bit signed scales). Without importance
 * {@code quantize_row_q6_K_ref} (core's {@link Q6_K#quantizeReference}); with it
 * {@code quantize_row_q6_K_impl}: {@code make_qx_quants(16, 32)} weighted by {@code qw} itself.
 */
public final class Q6_KQuantizer implements BlockQuantizer {
    static final Q6_KQuantizer INSTANCE = new Q6_KQuantizer();
    private static final int BYTES = 210, QL = 0, QH = 128, SCALES = 192, D = 208;

    private Q6_KQuantizer() {}

    @Override public GgmlType type() { return GgmlType.Q6_K; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] qw, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, qw);
        if (qw == null) {
            Q6_K.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
            return;
        }
        byte[] L = new byte[256];
        float[] scales = new float[16];
        for (int i = 0; i < n / 256; i++) {
            int xb = xOff + 256 * i, y = dstOff + i * BYTES;
            float maxScale = 0, maxAbsScale = 0;
            for (int ib = 0; ib < 16; ++ib) {
                float scale = QuantSearch.makeQxQuants(16, 32, x, xb + 16 * ib, L, 16 * ib, 1, qw, 256 * i + 16 * ib);
                scales[ib] = scale;
                float abs = Math.abs(scale);
                if (abs > maxAbsScale) {
                    maxAbsScale = abs;
                    maxScale = scale;
                }
            }
            if (maxAbsScale < QuantSearch.GROUP_MAX_EPS) {
                Bytes.zero(dst, y, BYTES);
                continue;
            }
            float iscale = -128.f / maxScale;
            short dh = Bytes.half(1 / iscale);
            Bytes.putShort(dst, y + D, dh);
            for (int ib = 0; ib < 16; ++ib) dst[y + SCALES + ib] = (byte) Math.min(127, nearestInt(iscale * scales[ib]));
            float d0 = Bytes.fromHalf(dh);
            for (int j = 0; j < 16; ++j) {
                float d = d0 * dst[y + SCALES + j];
                if (d == 0) continue;
                for (int ii = 0; ii < 16; ++ii) {
                    int l = nearestInt(x[xb + 16 * j + ii] / d);
                    L[16 * j + ii] = (byte) (Math.max(-32, Math.min(31, l)) + 32);
                }
            }
            int ql = y + QL, qh = y + QH;
            for (int j = 0; j < 256; j += 128) {
                for (int l = 0; l < 32; ++l) {
                    int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF, q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
                    dst[ql + l] = (byte) (q1 | (q3 << 4));
                    dst[ql + l + 32] = (byte) (q2 | (q4 << 4));
                    dst[qh + l] = (byte) ((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
                }
                ql += 64;
                qh += 32;
            }
        }
    }
}
