package io.modelopt.core.engine;

/**
 * Receives the input of each linear layer as a forward pass computes it: the hook calibration
 * (AWQ's activation scales, GPTQ's Hessians) is built on. Set with
 * {@link ModelRunner#observe(ActivationObserver)}; it sees the steps of {@link ModelRunner#forward}
 * and of {@link BlockRunner}.
 *
 * <p>It is called once per distinct input ({@link LinearInput}), not once per linear: q, k and v
 * share one call, gate and up another. Calls come from the thread that runs the step, in the
 * order of the forward pass, between the kernels (nothing else runs meanwhile).
 */
@FunctionalInterface
public interface ActivationObserver {
    /**
     * @param layer  the decoder block, 0-based; {@code numLayers} for {@link LinearInput#OUTPUT}
     * @param input  which input
     * @param rows   the activations, row-major: token {@code t}'s row is {@code rows[t·cols .. (t+1)·cols)},
     *               tokens in batch order (for {@link LinearInput#OUTPUT}: the tokens that want logits).
     *               The runner's own buffer: read it during the call, do not keep or modify it.
     * @param tokens rows in use (the array may be longer)
     * @param cols   floats per row
     */
    void onInput(int layer, LinearInput input, float[] rows, int tokens, int cols);
}
