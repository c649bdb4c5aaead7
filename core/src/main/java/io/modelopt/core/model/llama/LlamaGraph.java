package io.modelopt.core.model.llama;

import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.llama.LlamaOps.Activation;

/**
 * The Llama-family model (Llama 2/3, Mistral, Qwen2 with QKV biases, grouped-query attention)
 * as a sequence of operations on its weights, run by any backend's {@link LlamaOps}:
 * <pre>
 *   x = token_embd[token]                                   per token
 *   for each layer:
 *     xb = rmsnorm(x) · attn_norm
 *     q, k, v = Wq·xb (+bq), Wk·xb (+bk), Wv·xb (+bv)         one product each for all batch tokens
 *     rope(q), rope(k) at each token's position; k, v → KV storage at the token's slot
 *     att = softmax(q·Kᵀ/√headDim over positions 0..pos of the token's sequence) · V
 *     x += Wo·att
 *     xb = rmsnorm(x) · ffn_norm
 *     x += Wdown·(silu(Wgate·xb) ⊙ Wup·xb)
 *   logits = Woutput · (rmsnorm(x) · output_norm)           only for tokens that want logits
 * </pre>
 * This class is the one place that says which operation runs in which order on which weight;
 * backends say how. It holds no state of a step, so one graph serves every runner of a model.
 * The {@link #blocks} and {@link #head} pieces exist separately for layer-wise calibration
 * ({@link io.modelopt.core.engine.BlockRunner}); a full step is {@link #forward}.
 */
public final class LlamaGraph {
    private final LlamaWeights weights;

    public LlamaGraph(LlamaWeights weights) {
        this.weights = weights;
    }

    public LlamaWeights weights() { return weights; }

    public int numLayers() { return weights.numLayers(); }

    /** A whole step: embeddings, every block with each block's own KV layer, the logits rows. */
    public void forward(LlamaOps ops) {
        ops.embed(weights.tokenEmbedding());
        blocks(ops, 0, weights.numLayers(), false, null);
        head(ops, null);
    }

    /**
     * Blocks {@code [from, to)} over X. Keys and values go to each block's own layer of the KV
     * storage, or, with {@code oneKvLayer}, all to layer 0 (a block runner's one-layer scratch).
     *
     * @param substitution the matrices to multiply with; null for the model's own
     */
    public void blocks(LlamaOps ops, int from, int to, boolean oneKvLayer, WeightSubstitution substitution) {
        for (int l = from; l < to; l++) {
            LlamaWeights.Layer w = weights.layer(l);
            ops.norm(w.attnNorm());
            attention(ops, l, w, oneKvLayer ? 0 : l, substitution);
            ops.addThenNorm(w.ffnNorm());
            mlp(ops, l, w, substitution);
            ops.add();
        }
    }

    /**
     * One half of block {@code layer} over X, keys and values to the KV storage's layer 0 (a block
     * runner's scratch). {@link BlockPart#ATTENTION} then {@link BlockPart#MLP} compute what
     * {@link #blocks} computes for the block, bit for bit (add then norm is the fused step's arithmetic).
     */
    public void blockPart(LlamaOps ops, int layer, BlockPart part, WeightSubstitution substitution) {
        LlamaWeights.Layer w = weights.layer(layer);
        if (part == BlockPart.ATTENTION) {
            ops.norm(w.attnNorm());
            attention(ops, layer, w, 0, substitution);
        } else {
            ops.norm(w.ffnNorm());
            mlp(ops, layer, w, substitution);
        }
        ops.add();
    }

    /** XB = Wo·attention(q, k, v of XB), the attention module's output. */
    private void attention(LlamaOps ops, int l, LlamaWeights.Layer w, int kvLayer, WeightSubstitution substitution) {
        ops.observe(l, LinearInput.QKV, Activation.XB);
        ops.matmul(Activation.XB, weight(substitution, l, Linear.Q, w.wq()), Activation.Q,
                weight(substitution, l, Linear.K, w.wk()), Activation.K, weight(substitution, l, Linear.V, w.wv()), Activation.V);
        ops.biasRopeStore(w.bq(), w.bk(), w.bv(), kvLayer);
        ops.attention(kvLayer);
        ops.observe(l, LinearInput.ATTN_OUTPUT, Activation.ATT);
        ops.matmul(Activation.ATT, weight(substitution, l, Linear.ATTN_OUTPUT, w.wo()), Activation.XB, null, null, null, null);
    }

    /** XB = Wdown·(silu(Wgate·XB) ⊙ Wup·XB), the MLP's output. */
    private void mlp(LlamaOps ops, int l, LlamaWeights.Layer w, WeightSubstitution substitution) {
        ops.observe(l, LinearInput.GATE_UP, Activation.XB);
        ops.matmul(Activation.XB, weight(substitution, l, Linear.GATE, w.gate()), Activation.HB,
                weight(substitution, l, Linear.UP, w.up()), Activation.HB2, null, null);
        ops.swiglu();
        ops.observe(l, LinearInput.DOWN, Activation.HB);
        ops.matmul(Activation.HB, weight(substitution, l, Linear.DOWN, w.down()), Activation.XB, null, null, null, null);
    }

    /** The final norm and the classifier for the tokens that want logits. */
    public void head(LlamaOps ops, WeightSubstitution substitution) {
        int l = weights.numLayers();
        ops.finalNorm(weights.outputNorm());
        ops.observe(l, LinearInput.OUTPUT, Activation.FINAL);
        ops.matmul(Activation.FINAL, weight(substitution, l, Linear.OUTPUT, weights.output()), Activation.LOGITS, null, null, null, null);
    }

    private static WeightMatrix weight(WeightSubstitution s, int layer, Linear linear, WeightMatrix own) {
        return s == null ? own : s.weight(layer, linear, own);
    }
}
