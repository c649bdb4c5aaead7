package io.modelopt.core.kernel;

/**
 * The gated FFN activation of the Llama family: {@code gate[i] = silu(gate[i]) · up[i]} with
 * {@code silu(g) = g / (1 + e^-g)} (torch's {@code F.silu}), computed as llama.cpp's
 * {@code ggml_vec_silu_f32} does on AVX-512: the first {@code n & ~15} elements with
 * {@link GgmlExp#silu}, the tail with {@code g / (1 + expf(-g))}; then the product with
 * {@code up} (ggml_mul). Written in place into {@code gate} so the FFN needs no third buffer.
 * Scalar and vector modes give identical results.
 */
public final class SwiGlu {
    private SwiGlu() {}

    public static void apply(float[] gate, int gateOff, float[] up, int upOff, int n) {
        apply(KernelMode.DEFAULT, gate, gateOff, up, upOff, n);
    }

    public static void apply(KernelMode mode, float[] gate, int gateOff, float[] up, int upOff, int n) {
        int chunked = n & ~15;
        if (mode == KernelMode.VECTOR) {
            ElementwiseVector.siluMul(gate, gateOff, up, upOff, chunked);
        } else {
            for (int i = 0; i < chunked; i++) gate[gateOff + i] = GgmlExp.silu(gate[gateOff + i]) * up[upOff + i];
        }
        for (int i = chunked; i < n; i++) gate[gateOff + i] = silu(gate[gateOff + i]) * up[upOff + i];
    }

    static float silu(float g) {
        return g / (1f + (float) Math.exp(-g));
    }
}
