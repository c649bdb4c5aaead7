package io.modelopt.core.engine;

import java.util.List;

/**
 * A distinct input of linear layers in a decoder block, in the order the forward pass computes
 * them: the normed hidden state that q, k and v read, the attention output, the normed hidden
 * state that gate and up read, the SwiGLU product that down reads, and the final normed hidden
 * state the classifier reads. Calibration statistics (AWQ's mean |x|, GPTQ's XXᵀ) are per input,
 * shared by the linears that read it.
 */
public enum LinearInput {
    /** rmsnorm(x) · attn_norm, {@code hidden} columns. */
    QKV,
    /** The attention heads' output, {@code numHeads · headDim} columns. */
    ATTN_OUTPUT,
    /** rmsnorm(x) · ffn_norm, {@code hidden} columns. */
    GATE_UP,
    /** silu(gate) ⊙ up, {@code intermediate} columns. */
    DOWN,
    /** rmsnorm(x) · output_norm of the tokens that want logits, {@code hidden} columns. */
    OUTPUT;

    /** The linears that read this input. */
    public List<Linear> linears() {
        // computed on each call: a static table here would initialize Linear from inside LinearInput's initializer (and vice versa)
        return java.util.Arrays.stream(Linear.values()).filter(l -> l.input() == this).toList();
    }
}
