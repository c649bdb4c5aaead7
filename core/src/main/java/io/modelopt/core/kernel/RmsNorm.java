package io.modelopt.core.kernel;

/**
 * Root-mean-square layer norm: {@code out[i] = x[i] / sqrt(mean(x²) + eps) · weight[i]}, as in
 * llama.cpp ({@code ggml_rms_norm} then a multiply by the norm weight) and transformers'
 * {@code LlamaRMSNorm} (the product {@code x·scale} is rounded to float before the weight
 * multiply in both). The scale is computed with llama.cpp's exact operations (float squares summed
 * in double, float mean, {@code 1.0f/sqrtf(mean + eps)}) in both modes, so a quantized model sees
 * the same activations as in llama.cpp (see {@code model.Rope} on why that matters); only the final
 * multiplies, which are exact element by element, are vectorized. {@code out} may be {@code x}.
 */
public final class RmsNorm {
    private RmsNorm() {}

    public static void apply(float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        apply(KernelMode.DEFAULT, x, xOff, weight, eps, out, outOff, n);
    }

    public static void apply(KernelMode mode, float[] x, int xOff, float[] weight, float eps, float[] out, int outOff, int n) {
        if (weight.length < n) throw new IllegalArgumentException("norm weight has " + weight.length + " elements, need " + n);
        // ggml_compute_forward_rms_norm_f32: float squares summed in double, then float mean, sqrtf, 1.0f/x
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float sq = x[xOff + i] * x[xOff + i];
            sum += sq;
        }
        float mean = (float) (sum / n);
        float scale = 1.0f / (float) Math.sqrt(mean + eps);   // (float) Math.sqrt of a float is the correctly rounded sqrtf
        if (mode == KernelMode.VECTOR) {
            ElementwiseVector.scaleMul(x, xOff, scale, weight, out, outOff, n);
            return;
        }
        for (int i = 0; i < n; i++) out[outOff + i] = (x[xOff + i] * scale) * weight[i];
    }
}
