package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;

/** A step's batch against the runner's limits, the model and the KV memory, before anything runs; each problem named. */
final class BatchChecks {
    private BatchChecks() {}

    static void check(Batch b, KvCache c, CpuLlamaRunner r) {
        shape(b, c.numLayers(), c.numKvHeads(), c.headDim(), r);
        for (int i = 0; i < b.size(); i++) {
            int seq = b.sequenceId(i);
            if (seq >= c.maxSequences()) {
                throw new IllegalArgumentException("batch token " + i + ": sequence id " + seq + " is outside the KV cache's " + c.maxSequences() + " sequences");
            }
        }
        for (int j = 0; j < b.sequenceCount(); j++) {
            int seq = b.sequence(j), first = b.firstPosition(j), last = b.lastPosition(j);
            int have = c.length(seq);
            if (first > have) {
                throw new IllegalArgumentException("sequence " + seq + ": batch starts at position " + first + " but the KV cache holds only "
                        + have + " positions (positions " + have + ".." + (first - 1) + " were never computed)");
            }
            if (last >= c.capacity(seq)) {
                throw new IllegalArgumentException("sequence " + seq + ": position " + last + " is beyond the KV cache's capacity of " + c.capacity(seq) + " positions");
            }
        }
    }

    static void check(Batch b, KvStorage s, CpuLlamaRunner r) {
        KvLayout l = s.layout();
        shape(b, l.numLayers(), l.numKvHeads(), l.headDim(), r);
        if (!b.hasBlockTables()) {
            throw new IllegalArgumentException("a batch on bare KV storage needs block tables (Batch.Builder.blockSize and blockTable): the storage does not know where a sequence lives");
        }
        if (l.dtype() != r.options().kvDtype()) {
            throw new IllegalArgumentException("KV storage of " + l.dtype() + " entries; this runner was built for " + r.options().kvDtype());
        }
        for (int j = 0; j < b.sequenceCount(); j++) {
            for (int i = 0, used = b.lastPosition(j) / b.blockSize(); i <= used; i++) {
                int block = b.block(j, i);
                if (block >= l.numBlocks()) {
                    throw new IllegalArgumentException("sequence " + b.sequence(j) + ": block table entry " + i + " is block " + block
                            + ", outside the KV storage's " + l.numBlocks() + " blocks");
                }
            }
        }
    }

    /** The batch against the runner's limits and the model (tokens, positions), and the KV shape against the model. */
    static void shape(Batch b, int kvLayers, int kvHeads, int kvHeadDim, CpuLlamaRunner r) {
        ModelConfig config = r.config();
        int contextLength = r.contextLength(), vocab = config.vocabSize();
        if (b.size() > r.options().maxBatchTokens()) {
            throw new IllegalArgumentException("batch of " + b.size() + " tokens exceeds maxBatchTokens " + r.options().maxBatchTokens());
        }
        if (b.logitsCount() > r.options().maxLogitsRows()) {
            throw new IllegalArgumentException("batch asks for " + b.logitsCount() + " logits rows, more than maxLogitsRows " + r.options().maxLogitsRows());
        }
        if (kvLayers != config.numLayers() || kvHeads != config.numKvHeads() || kvHeadDim != config.headDim()) {
            throw new IllegalArgumentException("KV cache of " + kvLayers + " layers x " + kvHeads + " KV heads x " + kvHeadDim
                    + " does not fit this model (" + config.numLayers() + " layers x " + config.numKvHeads() + " KV heads x " + config.headDim() + ")");
        }
        tokens(b, vocab, contextLength);
    }

    /** Token ids inside the vocabulary, positions inside the context. */
    static void tokens(Batch b, int vocab, int contextLength) {
        for (int i = 0; i < b.size(); i++) {
            int tok = b.token(i), pos = b.position(i), seq = b.sequenceId(i);
            if (tok >= vocab) throw new IllegalArgumentException("batch token " + i + ": token id " + tok + " is outside the vocabulary of " + vocab);
            if (pos >= contextLength) {
                throw new IllegalArgumentException("batch token " + i + " (sequence " + seq + "): position " + pos
                        + " is beyond the context length " + contextLength + " (positions 0.." + (contextLength - 1) + ")");
            }
        }
    }
}
