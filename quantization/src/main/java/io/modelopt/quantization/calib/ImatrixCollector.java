package io.modelopt.quantization.calib;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.ActivationObserver;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.WeightSubstitution;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * llama-imatrix's statistics on the activation observer: for every block linear, per input
 * column, the sum of squared activations, the number of rows summed, and the number of calls
 * ({@code ncall}: one per matrix product of at least 16 tokens, as {@code collect_imatrix} counts
 * them; smaller products are ignored as it ignores them). Linears that share an input (q/k/v,
 * gate/up) get the same values under their own names, as llama.cpp sees one product per weight.
 * {@code output.weight} is left out (llama-imatrix's default, {@code --process-output} off).
 *
 * <p>{@link #run} feeds chunks as llama-imatrix does: each chunk one sequence, in batches of at
 * most {@code batchTokens} tokens (its {@code n_batch}, 2048).
 */
public final class ImatrixCollector implements ActivationObserver {
    /** llama-imatrix skips products of fewer rows ({@code src1->ne[1] < 16}). */
    static final int MIN_ROWS = 16;

    /** One tensor's statistics. */
    public static final class Entry {
        final double[] sum;
        long rows;
        int calls;

        Entry(int cols) { sum = new double[cols]; }

        /** {@code sum(x²) / count · ncall}, what {@code save_imatrix} writes. */
        public float[] values() {
            float[] v = new float[sum.length];
            for (int i = 0; i < v.length; i++) v[i] = (float) (sum[i] / rows * calls);
            return v;
        }

        public int calls() { return calls; }
    }

    private final Set<String> tensors;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private int chunks;

    /** @param tensors the model's tensor names (a linear the model lacks is not recorded) */
    public ImatrixCollector(Set<String> tensors) {
        this.tensors = Set.copyOf(tensors);
    }

    @Override public void onInput(int layer, LinearInput input, float[] rows, int tokens, int cols) {
        if (input == LinearInput.OUTPUT || tokens < MIN_ROWS) return;
        Entry shared = null;
        for (Linear l : input.linears()) {
            String name = l.tensorName(layer);
            if (!tensors.contains(name)) continue;
            Entry e = entries.computeIfAbsent(name, n -> new Entry(cols));
            if (e.sum.length != cols) throw new IllegalStateException("inconsistent size for " + name + " (" + e.sum.length + " vs " + cols + ")");
            if (shared == null) {
                for (int t = 0; t < tokens; t++) {
                    int o = t * cols;
                    for (int j = 0; j < cols; j++) {
                        double x = rows[o + j];
                        e.sum[j] += x * x;
                    }
                }
                shared = e;
            } else if (shared != e) {
                // same input as the first linear: add the same increment without recomputing it
                for (int t = 0; t < tokens; t++) {
                    int o = t * cols;
                    for (int j = 0; j < cols; j++) {
                        double x = rows[o + j];
                        e.sum[j] += x * x;
                    }
                }
            }
            e.rows += tokens;
            e.calls++;
        }
    }

    /**
     * Runs the chunks of {@code data} (sequential samples) through {@code runner} with this
     * collector observing, reporting chunk by chunk.
     */
    public void run(ModelRunner runner, CalibrationData data, int batchTokens, ProgressListener progress) {
        ProgressListener p = progress == null ? ProgressListener.NONE : progress;
        BlockRunner blocks = runner.blocks();
        int len = data.sequenceLength(), h = blocks.hiddenSize();
        runner.observe(this);
        long t0 = System.nanoTime();
        try {
            for (int c = 0; c < data.size(); c++) {
                int[] ids = data.sample(c);
                // one sequence per chunk; llama.cpp's batches of a chunk continue its positions
                if (len > batchTokens) throw new IllegalArgumentException("chunks of " + len + " tokens need batches of " + len + ", have " + batchTokens);
                Batch b = Batch.builder(len).addSequence(0, 0, ids, 0, len, false).build();
                float[] x = new float[len * h];
                blocks.embed(b, x);
                blocks.forward(0, blocks.numBlocks(), b, x, x, WeightSubstitution.NONE);
                chunks++;
                double s = (System.nanoTime() - t0) / 1e9;
                p.onProgress(String.format(Locale.ROOT, "imatrix chunk %d/%d, ETA %.0fs", c + 1, data.size(), s / (c + 1) * (data.size() - c - 1)), c + 1, data.size());
            }
        } finally {
            runner.observe(null);
        }
    }

    /** Per tensor, in the order first seen. */
    public Map<String, Entry> entries() { return entries; }

    /** Chunks run (llama-imatrix's last chunk number). */
    public int chunks() { return chunks; }
}
