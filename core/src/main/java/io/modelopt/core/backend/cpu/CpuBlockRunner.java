package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kv.ContiguousKvCache;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.llama.LlamaGraph;

/**
 * {@link BlockRunner} of a {@link CpuLlamaRunner}: the runner's graph and buffers, hidden states
 * copied into and out of the residual stream, keys and values in a one-layer scratch cache of
 * its own (so the runner's caches are never touched).
 */
final class CpuBlockRunner implements BlockRunner {
    private final CpuLlamaRunner runner;
    private final LlamaGraph graph;
    private final CpuLlamaOps ops;
    private final int hidden;
    /** One layer's keys and values for the calibration batch; grown on demand, freed with the runner. */
    private ContiguousKvCache scratch;

    CpuBlockRunner(CpuLlamaRunner runner, LlamaGraph graph, CpuLlamaOps ops) {
        this.runner = runner;
        this.graph = graph;
        this.ops = ops;
        this.hidden = runner.config().hiddenSize();
    }

    @Override public int numBlocks() { return graph.numLayers(); }
    @Override public int hiddenSize() { return hidden; }

    @Override public void embed(Batch b, float[] out) {
        check(b, out, null);
        ops.bind(b, null, null);
        try {
            ops.embed(graph.weights().tokenEmbedding());
            System.arraycopy(ops.residual(), 0, out, 0, b.size() * hidden);
        } finally {
            ops.unbind();
        }
    }

    @Override public void forward(int from, int to, Batch b, float[] in, float[] out, WeightSubstitution weights) {
        if (from < 0 || to > graph.numLayers() || from > to) {
            throw new IllegalArgumentException("blocks [" + from + ", " + to + ") outside the model's " + graph.numLayers() + " blocks");
        }
        check(b, in, out);
        int n = b.size();
        ContiguousKvCache kv = from < to ? scratchFor(b) : null;
        ops.bind(b, kv == null ? null : kv.storage(), kv);
        try {
            System.arraycopy(in, 0, ops.residual(), 0, n * hidden);
            if (from < to) {
                ops.ropeAngles(); // embed computes them in a full forward
                graph.blocks(ops, from, to, true, weights);
            }
            System.arraycopy(ops.residual(), 0, out, 0, n * hidden);
        } finally {
            ops.unbind();
        }
    }

    @Override public void forwardPart(int block, BlockPart part, Batch b, float[] in, float[] out, WeightSubstitution weights) {
        if (block < 0 || block >= graph.numLayers()) throw new IllegalArgumentException("block " + block + " outside the model's " + graph.numLayers() + " blocks");
        java.util.Objects.requireNonNull(part, "part");
        check(b, in, out);
        int n = b.size();
        ContiguousKvCache kv = part == BlockPart.ATTENTION ? scratchFor(b) : null;
        ops.bind(b, kv == null ? null : kv.storage(), kv);
        try {
            System.arraycopy(in, 0, ops.residual(), 0, n * hidden);
            if (part == BlockPart.ATTENTION) ops.ropeAngles();
            graph.blockPart(ops, block, part, weights);
            System.arraycopy(ops.residual(), 0, out, 0, n * hidden);
        } finally {
            ops.unbind();
        }
    }

    @Override public Logits logits(Batch b, float[] in, WeightSubstitution weights) {
        if (b.logitsCount() > runner.options().maxLogitsRows()) {
            throw new IllegalArgumentException("batch asks for " + b.logitsCount() + " logits rows, more than maxLogitsRows " + runner.options().maxLogitsRows());
        }
        check(b, in, null);
        ops.bind(b, null, null);
        try {
            System.arraycopy(in, 0, ops.residual(), 0, b.size() * hidden);
            graph.head(ops, weights);
            return ops.logits();
        } finally {
            ops.unbind();
        }
    }

    private void check(Batch b, float[] in, float[] out) {
        runner.checkOpen();
        if (b.size() > runner.options().maxBatchTokens()) {
            throw new IllegalArgumentException("batch of " + b.size() + " tokens exceeds maxBatchTokens " + runner.options().maxBatchTokens());
        }
        long need = (long) b.size() * hidden;
        if (in.length < need || (out != null && out.length < need)) {
            throw new IllegalArgumentException("hidden states of " + b.size() + " tokens need " + need + " floats; got arrays of "
                    + in.length + (out != null ? " and " + out.length : ""));
        }
        BatchChecks.tokens(b, runner.config().vocabSize(), runner.contextLength());
        for (int j = 0; j < b.sequenceCount(); j++) {
            if (b.firstPosition(j) != 0) {
                throw new IllegalArgumentException("sequence " + b.sequence(j) + " starts at position " + b.firstPosition(j)
                        + "; a block runner's sequences start at 0 (they attend only within the batch)");
            }
        }
    }

    /** A one-layer cache with room for the batch's sequence ids and positions. */
    private ContiguousKvCache scratchFor(Batch b) {
        int seqs = b.maxSequenceId() + 1, positions = 1;
        for (int j = 0; j < b.sequenceCount(); j++) positions = Math.max(positions, b.lastPosition(j) + 1);
        if (scratch == null || scratch.maxSequences() < seqs || scratch.maxPositions() < positions) {
            if (scratch != null) scratch.close();
            scratch = null;
            ModelConfig c = runner.config();
            scratch = new ContiguousKvCache(runner.allocate(ContiguousKvCache.layout(1, c.numKvHeads(), c.headDim(), seqs, positions, runner.options().kvDtype())));
        }
        return scratch;
    }

    void close() {
        if (scratch != null) scratch.close();
    }
}
