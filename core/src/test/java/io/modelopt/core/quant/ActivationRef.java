package io.modelopt.core.quant;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Test-side transcriptions of llama.cpp's activation quantizers, returning the dequantized values
 * ({@code q·d}) in double, so that kernel tests can build a float64 reference of exactly what the
 * quantized dot products compute.
 */
public final class ActivationRef {
    private ActivationRef() {}

    /** x86 {@code quantize_row_q8_0}: returns {q·d per element, d per block, s per block (block_q8_1.s)}. */
    public static double[][] q8_0(float[] x, int off, int n) {
        double[] v = new double[n], d = new double[n / 32], s = new double[n / 32];
        for (int b = 0; b < n / 32; b++) {
            float max = 0;
            boolean finite = true;
            for (int j = 0; j < 32; j++) {
                finite &= Float.isFinite(x[off + b * 32 + j]);
                max = Math.max(max, Math.abs(x[off + b * 32 + j]));
            }
            float dUnrounded = max / 127.f;
            d[b] = finite ? Float.float16ToFloat(Float.floatToFloat16(dUnrounded)) : Double.NaN;
            float id = max != 0.0f ? 127.f / max : 0.0f;
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                int q = finite ? Math.max(-128, Math.min(127, new BigDecimal(x[off + b * 32 + j] * id).setScale(0, RoundingMode.HALF_EVEN).intValueExact())) : 0;
                sum += q;
                v[b * 32 + j] = q * d[b];
            }
            s[b] = finite ? Float.float16ToFloat(Float.floatToFloat16(dUnrounded * sum)) : Double.NaN;
        }
        return new double[][]{v, d, s};
    }

    /** {@code quantize_row_q8_K_ref}: q·d per element (NaN for a non-finite block). */
    public static double[] q8_K(float[] x, int off, int n) {
        double[] v = new double[n];
        for (int b = 0; b < n / 256; b++) {
            float max = 0, amax = 0;
            boolean finite = true;
            for (int j = 0; j < 256; j++) {
                float xi = x[off + b * 256 + j];
                finite &= Float.isFinite(xi);
                if (Math.abs(xi) > amax) { amax = Math.abs(xi); max = xi; }
            }
            if (!finite) {
                for (int j = 0; j < 256; j++) v[b * 256 + j] = Double.NaN;
                continue;
            }
            if (amax == 0) continue;
            float iscale = -127.f / max;
            float d = 1 / iscale;
            for (int j = 0; j < 256; j++) {
                int q = Math.min(127, new BigDecimal(iscale * x[off + b * 256 + j]).setScale(0, RoundingMode.HALF_EVEN).intValueExact());
                v[b * 256 + j] = (double) q * d;
            }
        }
        return v;
    }
}
