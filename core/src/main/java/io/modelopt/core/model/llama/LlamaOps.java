package io.modelopt.core.model.llama;

import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.kernel.WeightMatrix;

/**
 * The operations {@link LlamaGraph} is written in: what a backend implements to run the Llama
 * family (the CPU backend with the Vector API kernels; a CUDA backend with its own). Each
 * operation works on the whole batch of the step the backend has bound, on activations the
 * backend owns and names as {@link Activation}s, so that the graph allocates nothing and knows
 * nothing of threads, memory or kernels.
 *
 * <p>Where an operation fuses two steps ({@link #addThenNorm}, {@link #biasRopeStore}), it is
 * because the backend runs them in one pass over the rows; the fusion is part of the order of
 * operations the fixture tests pin against llama.cpp.
 */
public interface LlamaOps {
    /** The activation buffers of a step, token-major: row t of one holds token t's values. */
    enum Activation {
        /** The residual stream, {@code hidden} per token. */
        X,
        /** A normed copy of X (a linear's input) or a projection's output before it is added to X, {@code hidden}. */
        XB,
        Q, K, V,
        /** The attention heads' output, {@code qDim}. */
        ATT,
        /** gate, then silu(gate) ⊙ up, {@code ffn}. */
        HB,
        /** up, {@code ffn}. */
        HB2,
        /** rmsnorm(x) · output_norm of the tokens that want logits, {@code hidden}. */
        FINAL,
        /** The logits of those tokens, {@code vocab}. */
        LOGITS
    }

    /** X = the rows of {@code embedding} of the batch's tokens; and the RoPE angles of their positions. */
    void embed(WeightMatrix embedding);

    /** The RoPE angles of the batch's positions only (a step that starts from given hidden states). */
    void ropeAngles();

    /** XB = rmsnorm(X) · {@code weight}. */
    void norm(float[] weight);

    /**
     * {@code out_i = in · w_i} for every token row, for one, two or three matrices reading the same
     * input (w1/out1 and w2/out2 may be null): q, k and v, or gate and up, go through one call
     * so that the backend reads the input once.
     */
    void matmul(Activation in, WeightMatrix w0, Activation out0, WeightMatrix w1, Activation out1, WeightMatrix w2, Activation out2);

    /**
     * Q, K, V += their biases (when not null); RoPE on Q and K; K and V stored at each token's
     * slot of {@code kvLayer} of the step's KV storage.
     */
    void biasRopeStore(float[] bq, float[] bk, float[] bv, int kvLayer);

    /** ATT = causal softmax(Q·Kᵀ/√headDim)·V of each token over positions 0..pos of its sequence, keys and values of {@code kvLayer}. */
    void attention(int kvLayer);

    /** X += XB; then XB = rmsnorm(X) · {@code weight}. */
    void addThenNorm(float[] weight);

    /** HB = silu(HB) ⊙ HB2. */
    void swiglu();

    /** X += XB. */
    void add();

    /** FINAL = rmsnorm(X) · {@code weight} of the tokens that want logits, in logits-row order. */
    void finalNorm(float[] weight);

    /** Shows {@code activation} to the step's activation observer, if one is set (the linear input {@code input} of {@code layer}). */
    void observe(int layer, LinearInput input, Activation activation);
}
