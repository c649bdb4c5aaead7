package io.modelopt.core.engine;

/**
 * One residual half of a decoder block, for losses measured at a module's output (AWQ scores a
 * scaling group on the attention or the MLP it feeds, not on the whole block).
 */
public enum BlockPart {
    /** {@code x + Wo·attention(rmsnorm(x) · attn_norm)}: the norm, q/k/v, RoPE, attention, o and the residual add. */
    ATTENTION,
    /** {@code x + Wdown·(silu(Wgate·xb) ⊙ Wup·xb)} with {@code xb = rmsnorm(x) · ffn_norm}, and the residual add. */
    MLP
}
