package io.modelopt.core.engine;

import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;

/**
 * A model loaded onto a {@link Backend}, ready to run {@link #forward} steps.
 *
 * <p>Not thread-safe: one {@code forward} at a time (a scheduler runs one step after another;
 * the parallelism is inside the step). The runner does not own the {@code ModelSource} it was
 * loaded from: the source's mapped weights must stay open until the runner is closed.
 */
public interface ModelRunner extends AutoCloseable {
    ModelConfig config();

    RunnerOptions options();

    /** Positions a sequence may use: the options' override or the model's trained context length. */
    int contextLength();

    /** A KV cache for {@link RunnerOptions#maxSequences()} sequences of {@link #contextLength()} positions. */
    default KvCache newKvCache() { return newKvCache(options().maxSequences(), contextLength()); }

    /** A contiguous KV cache of the options' dtype for {@code maxSequences} sequences of {@code maxPositions} positions each. */
    KvCache newKvCache(int maxSequences, int maxPositions);

    /**
     * Runs the model over every token of {@code batch}: writes each token's keys and values into
     * {@code cache} at its (sequence, position), attends causally to that sequence's positions
     * {@code 0..position}, and returns the logits of the tokens that asked for them, in batch order.
     *
     * <p>Before the call, the cache must hold positions {@code 0 .. p-1} of each sequence whose
     * first batch position is {@code p} (no gaps); afterwards its length for that sequence is
     * the last position + 1 (a later position computed before is dropped, since it was computed
     * from a different past).
     *
     * @return a view valid until the next {@code forward} or {@link #close()} (see {@link Logits})
     * @throws IllegalArgumentException naming the token, position and limit when a token id is
     *         outside the vocabulary, a position is at or beyond {@link #contextLength()} or the
     *         cache's capacity, a sequence id is outside the cache, the batch is larger than
     *         {@link RunnerOptions#maxBatchTokens()} or asks for more than
     *         {@link RunnerOptions#maxLogitsRows()} logits rows
     */
    Logits forward(Batch batch, KvCache cache);

    /**
     * KV storage of this model's shape and the options' dtype: {@code numBlocks} blocks of
     * {@code blockSize} slots per layer, allocated by this runner's backend (host memory for the
     * CPU), for {@link #forward(Batch, KvStorage)}. The caller owns it; close it before the runner.
     *
     * @throws UnsupportedOperationException if this runner only runs on its own caches
     */
    default KvStorage newKvStorage(int numBlocks, int blockSize) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no block KV storage");
    }

    /**
     * Runs {@code batch} like {@link #forward(Batch, KvCache)} on bare storage: each token's keys
     * and values go to the slot its block table gives ({@link Batch#slot(int)}), and attention
     * reads positions {@code 0..position} of its sequence through the same table. The batch must
     * have block tables; which blocks hold valid positions is the caller's bookkeeping (a block
     * manager's), nothing is recorded in the storage.
     *
     * @throws IllegalArgumentException as {@link #forward(Batch, KvCache)}, and when the batch has no
     *         block tables or a table names a block outside the storage
     */
    default Logits forward(Batch batch, KvStorage kv) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot run on bare KV storage");
    }

    /** Bytes of weights, repacked copies, KV storage and scratch this runner holds now. */
    RunnerMemory memory();

    /**
     * Sets the observer that receives each linear layer's input in the following steps
     * ({@link #forward} and {@link #blocks()}); null removes it. Without one a step costs nothing extra.
     *
     * @throws UnsupportedOperationException if this runner cannot show its activations
     */
    default void observe(ActivationObserver observer) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not expose its activations");
    }

    /**
     * The model block by block over hidden states, for layer-wise calibration; shares this
     * runner's buffers and weights.
     *
     * @throws UnsupportedOperationException if this runner cannot run single blocks
     */
    default BlockRunner blocks() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot run single decoder blocks");
    }

    /** Frees the runner's buffers and threads; the {@code ModelSource} stays open. */
    @Override void close();
}
