package io.modelopt.quantization.gguf;

import io.modelopt.core.tensor.GgmlType;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which type llama-quantize gives each tensor of a model for a preset: which tensors are
 * quantized at all ({@link #isQuantizable}) and llama.cpp's {@code llama_tensor_get_type} for the
 * k-quant and legacy presets (layer-dependent bumps of {@code attn_v}, {@code ffn_down},
 * {@code attn_output}, the output matrix, and the fallbacks when a row length is not a multiple
 * of the chosen type's block size).
 *
 * <p>Stateful like llama.cpp's {@code quantize_state_impl}: the {@code attn_v} and {@code ffn_*}
 * counters advance with every call, so {@link #typeFor} must be called once per quantizable
 * tensor in llama-quantize's order (layer number, then name; see {@link GgufQuantizer}).
 */
public final class TensorTypePolicy {

    /**
     * What the policy reads of the model: architecture name ({@code general.architecture}), layer
     * count, attention heads, KV heads and experts (0 or 1 for dense models).
     */
    public record ModelShape(String arch, int nLayer, int nHead, int nHeadKv, int nExpert) {
        public ModelShape {
            Objects.requireNonNull(arch, "arch");
            if (nLayer <= 0) throw new IllegalArgumentException("layer count must be positive, got " + nLayer);
            if (nHead <= 0 || nHeadKv <= 0) throw new IllegalArgumentException("head counts must be positive, got " + nHead + "/" + nHeadKv);
        }

        /** {@code n_gqa()}: query heads per KV head. */
        public int nGqa() { return nHead / nHeadKv; }

        boolean isFalcon() { return arch.equals("falcon"); }

        /** llama.cpp's {@code LLM_TYPE_70B} for a Llama: 80 layers with grouped-query attention. */
        boolean is70B() { return arch.equals("llama") && nExpert != 8 && nLayer == 80 && nHead != nHeadKv; }
    }

    private static final Pattern LAYER = Pattern.compile("^blk\\.(\\d+)\\.");

    private final GgufPreset preset;
    private final ModelShape shape;
    private final boolean hasImatrix;
    private final boolean hasOutput;
    private final int nAttentionWv;
    private int iAttentionWv, iFfnDown, iFfnGate, iFfnUp;
    private int nKQuantized, nFallback;

    /**
     * @param hasOutput    the model has an {@code output.weight} (else the token embedding is treated as the output)
     * @param nAttentionWv the number of {@code attn_v}/{@code attn_qkv}/{@code attn_kv_b} weights
     */
    public TensorTypePolicy(GgufPreset preset, ModelShape shape, boolean hasImatrix, boolean hasOutput, int nAttentionWv) {
        this.preset = Objects.requireNonNull(preset, "preset");
        this.shape = Objects.requireNonNull(shape, "shape");
        this.hasImatrix = hasImatrix;
        this.hasOutput = hasOutput;
        this.nAttentionWv = nAttentionWv;
    }

    /** Tensors llama-quantize replaces by a fallback type so far. */
    public int fallbackCount() { return nFallback; }

    /** Tensors whose chosen type fit their rows so far. */
    public int kQuantizedCount() { return nKQuantized; }

    /**
     * Whether llama-quantize quantizes a tensor at all: names ending in {@code weight} with at
     * least two dimensions, except norms, MoE gates, position/token-type embeddings and the
     * small Mamba/RWKV/T5 tensors it lists.
     */
    public static boolean isQuantizable(String name, int nDims) {
        if (!name.endsWith("weight") || nDims < 2) return false;
        for (String s : new String[] {"_norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight", "time_mix_first.weight",
                "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
                "time_mix_lerp_fused.weight", "attn_rel_b.weight"}) {
            if (name.contains(s)) return false;
        }
        return !name.equals("position_embd.weight") && !name.equals("token_types.weight");
    }

    private static boolean useMoreBits(int iLayer, int nLayers) {
        return iLayer < nLayers / 8 || iLayer >= 7 * nLayers / 8 || (iLayer - nLayers / 8) % 3 == 2;
    }

    private int layer(int counter, String name) {
        if (shape.nExpert() > 1) {
            Matcher m = LAYER.matcher(name);
            if (!m.find()) throw new IllegalArgumentException("Failed to determine layer for tensor " + name);
            int l = Integer.parseInt(m.group(1));
            if (l >= shape.nLayer()) throw new IllegalArgumentException("Bad layer " + l + " for tensor " + name + ". Must be in [0, " + shape.nLayer() + ")");
            return l;
        }
        return counter;
    }

    /**
     * The type of a quantizable tensor (ggml dims, {@code ne0} first), as
     * {@code llama_tensor_get_type}; advances the layer counters.
     *
     * @throws IllegalArgumentException the row length fits neither the type nor a fallback
     */
    public GgmlType typeFor(String name, long[] dims) {
        GgufPreset ft = preset;
        GgmlType t = preset.defaultType();
        long nx = dims[0];
        int nLayer = shape.nLayer();
        boolean falcon = shape.isFalcon();
        if (name.equals("output.weight") || (!hasOutput && name.equals("token_embd.weight"))) {
            if (falcon || nx % t.blockSize() != 0) t = GgmlType.Q8_0;
            else if (t != GgmlType.Q8_0) t = GgmlType.Q6_K;
        } else if (name.equals("token_embd.weight")) {
            // only IQ presets and TQ change the token embedding
        } else if (name.contains("attn_v.weight")) {
            if (ft == GgufPreset.Q2_K) t = shape.nGqa() >= 4 ? GgmlType.Q4_K : GgmlType.Q3_K;
            else if (ft == GgufPreset.Q2_K_S && shape.nGqa() >= 4) t = GgmlType.Q4_K;
            else if (ft == GgufPreset.Q3_K_M) t = iAttentionWv < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
            else if (ft == GgufPreset.Q3_K_L) t = GgmlType.Q5_K;
            else if ((ft == GgufPreset.Q4_K_M || ft == GgufPreset.Q5_K_M) && useMoreBits(iAttentionWv, nAttentionWv)) t = GgmlType.Q6_K;
            else if (ft == GgufPreset.Q4_K_S && iAttentionWv < 4) t = GgmlType.Q5_K;
            if (shape.is70B() && (t == GgmlType.Q3_K || t == GgmlType.Q4_K)) t = GgmlType.Q5_K;
            if (shape.nExpert() == 8) t = GgmlType.Q8_0;
            ++iAttentionWv;
        } else if (name.contains("attn_k.weight")) {
            if (shape.nExpert() == 8) t = GgmlType.Q8_0;
        } else if (name.contains("attn_q.weight")) {
            // only IQ presets change attn_q
        } else if (name.contains("ffn_down")) {
            int iLayer = layer(iFfnDown, name);
            if (ft == GgufPreset.Q2_K) t = GgmlType.Q3_K;
            else if (ft == GgufPreset.Q2_K_S) {
                if (iLayer < nLayer / 8) t = GgmlType.Q4_K;
            } else if (ft == GgufPreset.Q3_K_M) {
                t = iLayer < nLayer / 16 ? GgmlType.Q5_K
                        : !falcon || useMoreBits(iLayer, nLayer) ? GgmlType.Q4_K : GgmlType.Q3_K;
            } else if (ft == GgufPreset.Q3_K_L) {
                t = falcon ? GgmlType.Q4_K : GgmlType.Q5_K;
            } else if (ft == GgufPreset.Q4_K_M) {
                if (falcon) {
                    t = iLayer < nLayer / 16 ? GgmlType.Q6_K : useMoreBits(iLayer, nLayer) ? GgmlType.Q5_K : GgmlType.Q4_K;
                } else if (useMoreBits(iLayer, nLayer)) {
                    t = GgmlType.Q6_K;
                }
            } else if (ft == GgufPreset.Q5_K_M && useMoreBits(iLayer, nLayer)) {
                t = GgmlType.Q6_K;
            } else if (ft == GgufPreset.Q4_K_S && !falcon && iLayer < nLayer / 8) {
                t = GgmlType.Q5_K;
            } else if ((ft == GgufPreset.Q4_0 || ft == GgufPreset.Q5_0) && hasImatrix && iLayer < nLayer / 8) {
                t = ft == GgufPreset.Q4_0 ? GgmlType.Q4_1 : GgmlType.Q5_1;
            }
            ++iFfnDown;
        } else if (name.contains("attn_output.weight")) {
            if (!falcon) {
                if (shape.nExpert() == 8) {
                    if (ft == GgufPreset.Q2_K || ft == GgufPreset.Q3_K_S || ft == GgufPreset.Q3_K_M
                            || ft == GgufPreset.Q4_K_S || ft == GgufPreset.Q4_K_M) {
                        t = GgmlType.Q5_K;
                    }
                } else {
                    if (ft == GgufPreset.Q2_K) t = GgmlType.Q3_K;
                    else if (ft == GgufPreset.Q3_K_M) t = GgmlType.Q4_K;
                    else if (ft == GgufPreset.Q3_K_L) t = GgmlType.Q5_K;
                }
            } else if (ft == GgufPreset.Q3_K_L) {
                t = GgmlType.Q4_K;
            }
        } else if (name.contains("attn_qkv.weight")) {
            if (ft == GgufPreset.Q3_K_M || ft == GgufPreset.Q3_K_L) t = GgmlType.Q4_K;
            else if (ft == GgufPreset.Q4_K_M) t = GgmlType.Q5_K;
            else if (ft == GgufPreset.Q5_K_M) t = GgmlType.Q6_K;
        } else if (name.contains("ffn_gate")) {
            layer(iFfnGate, name);
            ++iFfnGate;
        } else if (name.contains("ffn_up")) {
            layer(iFfnUp, name);
            ++iFfnUp;
        }

        if (nx % t.blockSize() == 0) {
            ++nKQuantized;
            return t;
        }
        GgmlType chosen = t;
        t = switch (t) {
            case Q2_K, Q3_K -> GgmlType.IQ4_NL;
            case Q4_K -> GgmlType.Q5_0;
            case Q5_K -> GgmlType.Q5_1;
            case Q6_K -> GgmlType.Q8_0;
            default -> throw new IllegalArgumentException("tensor " + name + ": " + nx + " columns are not divisible by "
                    + chosen.blockSize() + ", required for " + chosen + ", and " + chosen + " has no fallback type (Unsupported tensor size)");
        };
        if (nx % t.blockSize() != 0) t = GgmlType.F16;
        ++nFallback;
        return t;
    }
}
