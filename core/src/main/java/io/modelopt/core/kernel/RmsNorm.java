package io.modelopt.core.kernel;

/**
 * Root-mean-square layer norm: {@code out[i] = x[i] / sqrt(mean(x²) + eps) · weight[i]}, as in
 * llama.cpp ({@code ggml_rms_norm} then a multiply by the norm weight) and transformers'
 * {@code LlamaRMSNorm} (the product {@code x·scale} is rounded to float before the weight
 * multiply in both). The scalar path sums the squares in double (as ggml's {@code ggml_float}
 * does); the vector path in float lanes. {@code out} may be {@code x} (in place).
 */
public final class RmsNorm {
    private RmsNorm() {}

    public static void apply(float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        apply(KernelMode.DEFAULT, x, xOff, weight, eps, out, outOff, n);
    }

    public static void apply(KernelMode mode, float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        if (weight.length < n) throw new IllegalArgumentException("norm weight has " + weight.length + " elements, need " + n);
        if (mode == KernelMode.VECTOR) {
            float ss = ElementwiseVector.sumOfSquares(x, xOff, n);
            ElementwiseVector.scaleMul(x, xOff, scale(ss, n, eps), weight, out, outOff, n);
            return;
        }
        double ss = 0;
        for (int i = 0; i < n; i++) ss += (double) x[xOff + i] * x[xOff + i];
        float scale = scale(ss, n, eps);
        for (int i = 0; i < n; i++) out[outOff + i] = (x[xOff + i] * scale) * weight[i];
    }

    private static float scale(double sumOfSquares, int n, float eps) {
        float mean = (float) (sumOfSquares / n);
        return (float) (1.0 / Math.sqrt(mean + eps));
    }
}
