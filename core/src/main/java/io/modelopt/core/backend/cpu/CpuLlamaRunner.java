package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.ActivationObserver;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerMemory;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.ContiguousKvCache;
import io.modelopt.core.kv.HostKvStorage;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.llama.LlamaGraph;
import io.modelopt.core.model.llama.LlamaWeights;
import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Llama-family model on the CPU: the {@link LlamaGraph} run by {@link CpuLlamaOps} over one
 * {@link ComputePool}. This class holds what a step needs around the graph: checking a batch
 * against the model, the cache and the buffers; binding the step's KV storage and slot mapping;
 * allocating KV memory and counting it; the load-time weight layouts ({@link WeightRepacking})
 * and the arena that owns them.
 */
public final class CpuLlamaRunner implements ModelRunner {
    private static final Logger LOG = LoggerFactory.getLogger(CpuLlamaRunner.class);

    private final ModelConfig config;
    private final RunnerOptions options;
    private final LlamaGraph graph;
    private final long tensorBytes;
    /** Owns the repacked weight copies; null when nothing is repacked. */
    private final Arena packArena;
    private final ComputePool pool;
    private final boolean ownsPool;
    private final CpuLlamaOps ops;
    private final CpuBlockRunner blockRunner;
    private final int contextLength, headDim, vocab;
    /** Bytes of the KV storage allocated through this runner and not yet closed. */
    private final AtomicLong kvBytes = new AtomicLong();
    private boolean closed;

    private CpuLlamaRunner(ModelSource source, RunnerOptions options) {
        this.config = source.config();
        this.options = options;
        LlamaWeights bound = LlamaWeights.bind(source);
        this.tensorBytes = bound.tensorBytes();
        KernelMode mode = options.kernelMode();
        this.contextLength = options.effectiveContextLength(config.contextLength());
        this.headDim = config.headDim();
        this.vocab = config.vocabSize();
        this.ownsPool = options.computePool() == null;
        this.pool = ownsPool ? new ComputePool(options.threads()) : options.computePool();
        // the vector kernels' repacked Q4_0/Q8_0/F16 copies (-Dmodelopt.repack=false reads every weight in place)
        boolean repack = WeightRepacking.applies(mode, bound);
        this.packArena = repack ? Arena.ofShared() : null;
        LlamaWeights weights;
        try {
            this.ops = new CpuLlamaOps(config, options.maxBatchTokens(), options.maxLogitsRows(), contextLength, mode, pool, bound.ropeFreqFactors());
            ops.batchInvariant(options.batchInvariant());
            long t0 = System.nanoTime();
            weights = repack ? WeightRepacking.repack(bound, packArena, pool) : bound;
            if (repack) {
                LOG.info("repacked Q4_0/Q8_0/F16 weights: {} bytes in {} ms (the copied file pages released)", weights.repackedBytes(),
                        (System.nanoTime() - t0) / 1_000_000);
            }
        } catch (RuntimeException | Error e) {
            if (packArena != null) packArena.close();
            if (ownsPool) pool.close();
            throw e;
        }
        this.graph = new LlamaGraph(weights);
        this.blockRunner = new CpuBlockRunner(this, graph, ops);
        LOG.info("cpu runner: {} ({} kernels, {} threads, {} batch tokens, {} logits rows, context {}, KV {}{})",
                config.architecture(), mode, options.threads(), options.maxBatchTokens(), options.maxLogitsRows(), contextLength, options.kvDtype(),
                weights.tiedOutput() ? ", tied output" : "");
    }

    /** Binds {@code source}'s weights and allocates the buffers for {@code options}. */
    public static CpuLlamaRunner load(ModelSource source, RunnerOptions options) {
        return new CpuLlamaRunner(source, options);
    }

    @Override public ModelConfig config() { return config; }
    @Override public RunnerOptions options() { return options; }
    @Override public int contextLength() { return contextLength; }

    /** The weights the kernels read (with their repacked copies). */
    public LlamaWeights weights() { return graph.weights(); }

    @Override public KvCache newKvCache(int maxSequences, int maxPositions) {
        return new ContiguousKvCache(allocate(ContiguousKvCache.layout(config.numLayers(), config.numKvHeads(), headDim, maxSequences, maxPositions, options.kvDtype())));
    }

    @Override public KvStorage newKvStorage(int numBlocks, int blockSize) {
        return allocate(KvLayout.of(config.numLayers(), config.numKvHeads(), headDim, numBlocks, blockSize, options.kvDtype()));
    }

    /** Host KV memory of {@code layout}, counted in {@link #memory()} until it is closed. */
    KvStorage allocate(KvLayout layout) {
        long bytes = layout.byteSize();
        KvStorage s = new HostKvStorage(layout, () -> kvBytes.addAndGet(-bytes));
        kvBytes.addAndGet(bytes);
        return s;
    }

    @Override public RunnerMemory memory() {
        return new RunnerMemory(tensorBytes, graph.weights().repackedBytes(), kvBytes.get(), ops.scratchBytes());
    }

    @Override public Logits forward(Batch batch, KvCache cache) {
        checkOpen();
        if (batch.hasBlockTables()) {
            throw new IllegalArgumentException("a batch with block tables runs on bare KV storage (forward(Batch, KvStorage)); a KvCache places keys and values itself");
        }
        BatchChecks.check(batch, cache, this);
        run(batch, cache.storage(), cache);
        for (int j = 0; j < batch.sequenceCount(); j++) cache.setLength(batch.sequence(j), batch.lastPosition(j) + 1);
        return ops.logits();
    }

    @Override public Logits forward(Batch batch, KvStorage storage) {
        checkOpen();
        BatchChecks.check(batch, storage, this);
        run(batch, storage, null);
        return ops.logits();
    }

    private void run(Batch batch, KvStorage storage, KvCache mapping) {
        ops.bind(batch, storage, mapping);
        try {
            graph.forward(ops);
        } finally {
            ops.unbind();
        }
    }

    @Override public void observe(ActivationObserver observer) { ops.observer(observer); }

    @Override public BlockRunner blocks() { return blockRunner; }

    void checkOpen() {
        if (closed) throw new IllegalStateException("runner is closed");
    }

    int headDim() { return headDim; }

    int vocabSize() { return vocab; }

    @Override public void close() {
        if (!closed) {
            closed = true;
            blockRunner.close();
            if (ownsPool) pool.close();
            if (packArena != null) packArena.close();
        }
    }

    @Override public String toString() {
        return "CpuLlamaRunner[" + config.architecture() + ", " + config.numLayers() + " layers, context " + contextLength + "]";
    }
}
