package io.modelopt.core.engine;

/**
 * The linear layers (weight matrices) of a Llama-family decoder, named as GGUF names them. The
 * unit of weight substitution ({@link WeightSubstitution}) and of quantization: each has its own
 * matrix. Several linears read the same input ({@link #input()}), which is why an
 * {@link ActivationObserver} sees inputs, not linears.
 */
public enum Linear {
    Q("attn_q", LinearInput.QKV),
    K("attn_k", LinearInput.QKV),
    V("attn_v", LinearInput.QKV),
    ATTN_OUTPUT("attn_output", LinearInput.ATTN_OUTPUT),
    GATE("ffn_gate", LinearInput.GATE_UP),
    UP("ffn_up", LinearInput.GATE_UP),
    DOWN("ffn_down", LinearInput.DOWN),
    /** The classifier ({@code output.weight}, or {@code token_embd.weight} when tied); its "layer" is {@code numLayers}. */
    OUTPUT("output", LinearInput.OUTPUT);

    private final String ggufName;
    private final LinearInput input;

    Linear(String ggufName, LinearInput input) {
        this.ggufName = ggufName;
        this.input = input;
    }

    /** The GGUF tensor name stem: {@code attn_q}, ..., {@code output}. */
    public String ggufName() { return ggufName; }

    /** The activation this linear multiplies. */
    public LinearInput input() { return input; }

    /** The canonical (GGUF) tensor name of this linear's weight in block {@code layer}: {@code blk.3.attn_q.weight}, or {@code output.weight}. */
    public String tensorName(int layer) {
        return this == OUTPUT ? "output.weight" : "blk." + layer + "." + ggufName + ".weight";
    }
}
