package io.modelopt.kvcache;

import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvStorage;

import java.util.Objects;

/**
 * A paged KV cache for one runner: the backend's storage of {@code numBlocks} blocks (one
 * {@link java.lang.foreign.Arena}, owned here and released by {@link #close()}) and the
 * {@link BlockManager} that hands them out. What the engine holds: each step it calls
 * {@link #applyCopies()}, builds the batch from {@link #blocks()}'s block tables, and runs
 * {@code runner.forward(batch, pool.storage())}. A closed pool refuses use with an
 * {@link IllegalStateException}.
 */
public final class KvBlockPool implements AutoCloseable {
    private final KvStorage storage;
    private final BlockManager blocks;
    private boolean closed;

    private KvBlockPool(KvStorage storage, BlockManager blocks) {
        this.storage = storage;
        this.blocks = blocks;
    }

    /** A pool of the plan's exact block count for {@code runner} (its KV dtype), prefix caching on. */
    public static KvBlockPool of(ModelRunner runner, KvBudget.Plan plan) {
        return of(runner, plan.numBlocks(), plan.blockSize(), true);
    }

    /**
     * @throws IllegalArgumentException for a block size that is not a power of two from 8 to 256, or fewer than one block
     */
    public static KvBlockPool of(ModelRunner runner, int numBlocks, int blockSize, boolean prefixCaching) {
        Objects.requireNonNull(runner, "runner");
        BlockManager m = BlockManager.builder().numBlocks(numBlocks).blockSize(blockSize).kvDtype(runner.options().kvDtype())
                .prefixCaching(prefixCaching).build();
        return new KvBlockPool(runner.newKvStorage(numBlocks, blockSize), m);
    }

    /** The block storage, for {@code ModelRunner.forward(Batch, KvStorage)}. */
    public KvStorage storage() {
        checkOpen();
        return storage;
    }

    /** The block tables and counts. */
    public BlockManager blocks() {
        checkOpen();
        return blocks;
    }

    /** Carries out the manager's queued copy-on-writes on the storage (before each forward step); returns how many. */
    public int applyCopies() {
        checkOpen();
        var copies = blocks.drainCopies();
        BlockCopier.copy(storage, copies);
        return copies.size();
    }

    public boolean isClosed() { return closed; }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("the KV block pool (" + blocks.numBlocks() + " blocks x " + blocks.blockSize() + " tokens) is closed");
    }

    /** Frees the storage at once; later use throws. */
    @Override public void close() {
        if (!closed) {
            closed = true;
            storage.close();
        }
    }

    @Override public String toString() {
        return "KvBlockPool[" + blocks + (closed ? ", closed" : ", " + storage.byteSize() + " B") + "]";
    }
}
