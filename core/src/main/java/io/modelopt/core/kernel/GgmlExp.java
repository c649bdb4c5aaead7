package io.modelopt.core.kernel;

/**
 * The single-precision exponential llama.cpp's CPU backend uses in softmax and SiLU
 * ({@code ggml_v_expf}, the AVX-512 form, "adapted from arm limited optimized routine": a
 * degree-5 polynomial on a range-reduced argument, max error 1.45 ulp + 0.5 ulp, overflow to
 * +inf above 88.38, flush to 0 below -103.97), written with {@link Math#fma} so every operation
 * rounds exactly as the vector instructions do.
 *
 * <p>Why not {@code Math.exp}: the same values as llama.cpp keep a quantized model's activations
 * on the same side of every rounding boundary (see {@code model.Rope}); and a polynomial of FMAs can be
 * vectorized ({@link ElementwiseVector#expShift}, {@link ElementwiseVector#siluMul}) with results that do not depend on the JIT, unlike
 * the Vector API's own {@code EXP}.
 */
final class GgmlExp {
    private GgmlExp() {}

    static final float SHIFT = 0x1.8p23f;
    static final float LOG2E = 0x1.715476p+0f;
    static final float LN2_HI = 0x1.62e4p-1f;
    static final float LN2_LO = 0x1.7f7d1cp-20f;
    static final float C5 = 0x1.0e4020p-7f, C4 = 0x1.573e2ep-5f, C3 = 0x1.555e66p-3f, C2 = 0x1.fffdb6p-2f, C1 = 0x1.ffffecp-1f;

    /** One lane of {@code ggml_v_expf} (AVX-512). */
    static float expf(float x) {
        float z = Math.fma(x, LOG2E, SHIFT);
        float n = z - SHIFT;
        float b = Math.fma(-n, LN2_LO, Math.fma(-n, LN2_HI, x));
        float u = b * b;
        float j = Math.fma(Math.fma(Math.fma(C5, b, C4), u, Math.fma(C3, b, C2)), u, Math.fma(C1, b, 1.0f));
        if (Math.abs(n) > 192) return n <= 0 ? 0f : Float.POSITIVE_INFINITY;
        return scalef(j, n);
    }

    /**
     * {@code _mm512_scalef_ps}: {@code j · 2^n} rounded once, for integral {@code |n| <= 192}. Split
     * as {@code (j · 2^a) · 2^b} with {@code a} clamped to ±100, so the first product is exact and
     * only the second rounds (into the subnormals or to infinity when it must).
     */
    static float scalef(float j, float n) {
        int ni = (int) n;
        int a = Math.clamp(ni, -100, 100), b = ni - a;
        return (j * pow2(a)) * pow2(b);
    }

    /** 2^k as a float, for k in [-126, 127]. */
    static float pow2(int k) {
        return Float.intBitsToFloat((k + 127) << 23);
    }

    /** {@code x / (1 + expf(-x))} as {@code ggml_v_silu} computes it (0 - x, then the division). */
    static float silu(float x) {
        return x / (1.0f + expf(0.0f - x));
    }

    /**
     * {@code _mm512_reduce_add_ps} of {@code x[off .. off+16)} (entries at or beyond {@code n} count
     * as 0): halves added lane-wise 16→8→4, then (0+2)+(1+3).
     */
    static float reduce16(float[] x, int off, int n) {
        float a0 = at(x, off, n, 0) + at(x, off, n, 8), a1 = at(x, off, n, 1) + at(x, off, n, 9);
        float a2 = at(x, off, n, 2) + at(x, off, n, 10), a3 = at(x, off, n, 3) + at(x, off, n, 11);
        float a4 = at(x, off, n, 4) + at(x, off, n, 12), a5 = at(x, off, n, 5) + at(x, off, n, 13);
        float a6 = at(x, off, n, 6) + at(x, off, n, 14), a7 = at(x, off, n, 7) + at(x, off, n, 15);
        float b0 = a0 + a4, b1 = a1 + a5, b2 = a2 + a6, b3 = a3 + a7;
        return (b0 + b2) + (b1 + b3);
    }

    private static float at(float[] x, int off, int n, int i) {
        return i < n ? x[off + i] : 0f;
    }
}
