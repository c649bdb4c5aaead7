package io.modelopt.core.engine;

/**
 * The model as a stack of decoder blocks over hidden states, for layer-wise calibration (AWQ,
 * GPTQ): embed a calibration batch once, run one block or a range of blocks at a time (optionally
 * with substituted weights), feed one block's output to the next, and read logits at the end.
 * {@code embed}, {@code forward(0, numBlocks)} and {@code logits} in sequence compute exactly what
 * {@link ModelRunner#forward} computes for the same batch, bit for bit.
 *
 * <p>The batch gives the tokens' positions and sequences (the token ids are read only by
 * {@link #embed}); each sequence must start at position 0 and attends causally within itself.
 * Keys and values go to scratch storage of the runner, never to a caller's KV cache. Hidden
 * states are row-major, {@code batch.size() × hiddenSize()} floats, token {@code t}'s row at
 * {@code t · hiddenSize()}. A batch may hold at most {@link RunnerOptions#maxBatchTokens()}
 * tokens (split a calibration set into batches of whole sequences); matrix products see the
 * batch's token count, so compare results of equally sized batches only.
 *
 * <p>Not thread-safe; shares the runner's buffers, so one call of the runner at a time.
 */
public interface BlockRunner {
    /** Decoder blocks of the model. */
    int numBlocks();

    /** Floats per hidden-state row. */
    int hiddenSize();

    /** {@code hidden}'s rows = the token embeddings of {@code batch}'s tokens. */
    void embed(Batch batch, float[] hidden);

    /**
     * Runs blocks {@code [from, to)} over {@code in} and writes the result to {@code out} ({@code in}
     * and {@code out} may be the same array), multiplying with the matrices {@code weights} chooses.
     * The observer set on the runner sees each block's linear inputs.
     */
    void forward(int from, int to, Batch batch, float[] in, float[] out, WeightSubstitution weights);

    /** One block, {@link #forward(int, int, Batch, float[], float[], WeightSubstitution) forward(block, block + 1, ...)}. */
    default void forwardBlock(int block, Batch batch, float[] in, float[] out, WeightSubstitution weights) {
        forward(block, block + 1, batch, in, out, weights);
    }

    /**
     * One residual half of {@code block} over {@code in} into {@code out} (they may be the same
     * array): {@code forwardPart(b, ATTENTION, …)} then {@code forwardPart(b, MLP, …)} on its result
     * equals {@link #forwardBlock}, bit for bit. The difference of two calls' outputs on the same
     * input is the difference of the attention's (or the MLP's) outputs, the residual cancelling.
     * The observer sees the part's linear inputs.
     */
    void forwardPart(int block, BlockPart part, Batch batch, float[] in, float[] out, WeightSubstitution weights);

    /**
     * The final norm and the classifier over the rows of {@code hidden} whose tokens want logits
     * (the observer sees {@link LinearInput#OUTPUT}); a view valid until the runner's next call.
     */
    Logits logits(Batch batch, float[] hidden, WeightSubstitution weights);
}
