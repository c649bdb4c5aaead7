package io.modelopt.core.generate;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.ContiguousKvCache;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * A stand-in for a model: the logits for the token at position {@code pos} come from
 * {@code rowFor.accept(pos, row)} (e.g. "favour script[pos + 1]"). It checks what a real runner
 * checks (positions continue the cache, within the context, logits rows fit) and records every
 * batch, so tests can see how the generator drove it.
 */
final class ScriptedRunner implements ModelRunner {
    final List<Batch> batches = new ArrayList<>();
    private final ModelConfig config;
    private final RunnerOptions options;
    private final BiConsumer<Integer, float[]> rowFor;
    private final float[] buffer;
    private final Logits logits;
    private final float[] row;

    ScriptedRunner(int vocab, int context, int maxBatch, BiConsumer<Integer, float[]> rowFor) {
        this.config = ModelConfig.builder().hiddenSize(8).numLayers(1).numHeads(2).intermediateSize(16).vocabSize(vocab)
                .contextLength(context).eosTokenIds(FakeTokenizer.EOS).build();
        this.options = RunnerOptions.builder().threads(1).kvDtype(KvDtype.F32).maxBatchTokens(maxBatch).maxLogitsRows(maxBatch).build();
        this.rowFor = rowFor;
        this.buffer = new float[maxBatch * vocab];
        this.logits = new Logits(buffer, vocab);
        this.row = new float[vocab];
    }

    /** Logits that make {@code script[pos + 1]} the argmax (EOS after the script's end). */
    static BiConsumer<Integer, float[]> following(int[] script) {
        return (pos, row) -> {
            java.util.Arrays.fill(row, 0f);
            row[pos + 1 < script.length ? script[pos + 1] : FakeTokenizer.EOS] = 10f;
        };
    }

    @Override public ModelConfig config() { return config; }

    @Override public RunnerOptions options() { return options; }

    @Override public int contextLength() { return config.contextLength(); }

    @Override public KvCache newKvCache(int maxSequences, int maxPositions) {
        return new ContiguousKvCache(1, 1, 2, maxSequences, maxPositions, KvDtype.F32);
    }

    @Override public Logits forward(Batch batch, KvCache cache) {
        if (batch.size() > options.maxBatchTokens()) throw new IllegalArgumentException("batch too large");
        for (int j = 0; j < batch.sequenceCount(); j++) {
            if (batch.firstPosition(j) != cache.length(batch.sequence(j))) {
                throw new IllegalArgumentException("gap: batch starts at " + batch.firstPosition(j) + ", cache holds " + cache.length(batch.sequence(j)));
            }
            if (batch.lastPosition(j) >= contextLength()) throw new IllegalArgumentException("position beyond context");
        }
        batches.add(batch);
        logits.reset(batch);
        for (int r = 0; r < batch.logitsCount(); r++) {
            rowFor.accept(batch.position(batch.logitsTokenIndex(r)), row);
            System.arraycopy(row, 0, buffer, r * row.length, row.length);
        }
        for (int j = 0; j < batch.sequenceCount(); j++) cache.setLength(batch.sequence(j), batch.lastPosition(j) + 1);
        return logits;
    }

    @Override public io.modelopt.core.engine.RunnerMemory memory() { return new io.modelopt.core.engine.RunnerMemory(0, 0, 0, 0); }

    @Override public void close() {}
}
