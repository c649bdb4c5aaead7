package io.modelopt.core.kernel;

/**
 * The gated FFN activation of the Llama family: {@code gate[i] = silu(gate[i]) · up[i]} with
 * {@code silu(g) = g / (1 + e^-g)} (ggml's {@code ggml_silu_f32}, torch's {@code F.silu}).
 * Written in place into {@code gate} so the FFN needs no third buffer.
 */
public final class SwiGlu {
    private SwiGlu() {}

    public static void apply(float[] gate, int gateOff, float[] up, int upOff, int n) {
        apply(KernelMode.DEFAULT, gate, gateOff, up, upOff, n);
    }

    /**
     * The same in both modes: the work is one exponential per element, and the Vector API's
     * {@code EXP} is not reproducible across JIT tiers (see {@link ElementwiseVector}).
     */
    public static void apply(KernelMode mode, float[] gate, int gateOff, float[] up, int upOff, int n) {
        for (int i = 0; i < n; i++) gate[gateOff + i] = silu(gate[gateOff + i]) * up[upOff + i];
    }

    static float silu(float g) {
        return g / (1f + (float) Math.exp(-g));
    }
}
