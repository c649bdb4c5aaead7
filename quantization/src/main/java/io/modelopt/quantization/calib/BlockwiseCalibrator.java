package io.modelopt.quantization.calib;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import io.modelopt.quantization.model.FloatRows;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Layer-wise calibration: embeds the calibration set once, then for each decoder block runs it
 * through the block with the {@link BlockMethod}'s statistics collected on the observer, lets the
 * method quantize the block, and runs the block again with the <i>quantized</i> weights to make the
 * next block's input (GPTQ's and AutoAWQ's order: each block is calibrated on what the quantized
 * model before it produces).
 *
 * <p>Memory: the hidden states of the whole calibration set for one block boundary (updated in
 * place, {@code samples × length × hidden} floats), one batch of scratch, and the statistics of
 * one block ({@link #peakBytes}). The float weights are decoded per linear when the method asks.
 *
 * <p>Progress: stage {@code "<method> blk i/n <phase>, ETA 1m20s"}, done/total in blocks.
 */
public final class BlockwiseCalibrator {
    private static final Logger LOG = LoggerFactory.getLogger(BlockwiseCalibrator.class);

    private final ModelSource source;
    private final ModelRunner runner;
    private final BlockRunner blocks;
    private final CalibrationData data;
    private final Function<String, IntScheme> schemes;
    private final Arena arena;
    private final ProgressListener progress;
    private final List<Batch> batches;
    private float[] scratch = new float[0];
    private String method = "";
    private long started;
    private int blocksDone;
    private long peakStatisticsBytes;

    /**
     * @param source    the float model (weights are read from it)
     * @param runner    a runner of {@code source} that can run single blocks and hold
     *                  {@code batchSequences × data.sequenceLength()} tokens per batch
     * @param schemes   the scheme of each block linear by canonical name, null for one that stays as it is
     * @param arena     owns the quantized tensors
     * @param batchSequences calibration sequences per batch
     */
    public BlockwiseCalibrator(ModelSource source, ModelRunner runner, CalibrationData data, Function<String, IntScheme> schemes,
                               Arena arena, ProgressListener progress, int batchSequences) {
        this.source = Objects.requireNonNull(source, "source");
        this.runner = Objects.requireNonNull(runner, "runner");
        this.blocks = runner.blocks();
        this.data = Objects.requireNonNull(data, "data");
        this.schemes = Objects.requireNonNull(schemes, "schemes");
        this.arena = Objects.requireNonNull(arena, "arena");
        this.progress = progress == null ? ProgressListener.NONE : progress;
        if (batchSequences < 1) throw new IllegalArgumentException("batchSequences must be positive, got " + batchSequences);
        this.batches = batches(data, batchSequences);
    }

    /** The calibration set as batches of whole sequences, each from position 0, no logits. */
    public static List<Batch> batches(CalibrationData data, int batchSequences) {
        List<Batch> out = new ArrayList<>();
        int len = data.sequenceLength();
        for (int s = 0; s < data.size(); s += batchSequences) {
            int n = Math.min(batchSequences, data.size() - s);
            Batch.Builder b = Batch.builder(n * len);
            for (int j = 0; j < n; j++) b.addSequence(j, 0, data.sample(s + j), 0, len, false);
            out.add(b.build());
        }
        return out;
    }

    /** What one calibration run made. */
    public record Result(Map<String, PackedIntTensors> quantized, Map<String, float[]> floatTensors, long peakBytes, double seconds) {}

    /**
     * Calibrates and quantizes every block with {@code method}.
     *
     * @throws IllegalArgumentException from the method, naming the tensor
     */
    public Result run(BlockMethod method) {
        this.method = method.name();
        started = System.nanoTime();
        int h = blocks.hiddenSize(), n = blocks.numBlocks();
        List<float[]> hidden = new ArrayList<>();
        long hiddenBytes = 0;
        for (Batch b : batches) {
            float[] x = new float[b.size() * h];
            blocks.embed(b, x);
            hidden.add(x);
            hiddenBytes += 4L * x.length;
        }
        Map<String, PackedIntTensors> quantized = new LinkedHashMap<>();
        Map<String, float[]> floats = new LinkedHashMap<>();
        try {
            for (int i = 0; i < n; i++) {
                blocksDone = i;
                phase(i, "collect");
                final int block = i;
                Map<LinearInput, InputStatistics> stats = new EnumMap<>(LinearInput.class);
                runBlock(i, hidden, null, WeightSubstitution.NONE, (input, cols) -> {
                    if (!stats.containsKey(input)) stats.put(input, method.statistics(block, input, cols));
                    return stats.get(input);
                });
                long statBytes = 0;
                for (InputStatistics s : stats.values()) if (s != null) statBytes += s.bytes();
                peakStatisticsBytes = Math.max(peakStatisticsBytes, statBytes);
                BlockResult r = method.quantizeBlock(new BlockContext(i, blocks, batches, hidden, stats, this));
                Map<Linear, WeightMatrix> subst = new EnumMap<>(Linear.class);
                for (Linear l : Linear.values()) {
                    if (l == Linear.OUTPUT) continue;
                    String name = l.tensorName(i);
                    PackedIntTensors t = r.quantized().get(l);
                    if (schemes.apply(name) != null && t == null) throw new IllegalStateException(method.name() + " left " + name + " unquantized");
                    if (t != null) {
                        quantized.put(name, t);
                        subst.put(l, t.matrix());
                    }
                }
                floats.putAll(r.floatTensors());
                WeightSubstitution next = r.outputWeights() != null ? r.outputWeights()
                        : (layer, linear, original) -> layer == block && subst.containsKey(linear) ? subst.get(linear) : original;
                phase(i, "forward");
                runBlock(i, hidden, hidden, next, (input, cols) -> null);
                r = null;
                stats.clear();
                // A block's working set (its float weights, statistics, Hessians, search buffers: hundreds of MB
                // on a 1B model) lives long enough to be promoted out of a small young generation and is then
                // garbage in the old one, which the parallel collector collects only in a full GC it is in no
                // hurry to run: it grows the heap instead (AWQ on the 134M model: +200 MB per block, 2.8 GB RSS
                // by the end). One full collection per block keeps the heap at one block's working set.
                System.gc();
            }
        } finally {
            runner.observe(null);
        }
        blocksDone = n;
        double seconds = (System.nanoTime() - started) / 1e9;
        progress.onProgress(method.name() + " blk " + n + "/" + n + " done", n, n);
        long peak = hiddenBytes + 4L * scratch.length + peakStatisticsBytes;
        LOG.info("{}: {} blocks on {} in {} s; peak calibration memory {} bytes (hidden states {}, statistics {})", method.name(), n,
                data.record(), String.format(Locale.ROOT, "%.1f", seconds), peak, hiddenBytes, peakStatisticsBytes);
        return new Result(quantized, floats, peak, seconds);
    }

    /** The statistics a block method holds at some moment ({@link BlockContext#noteWorkingBytes}); the peak is logged. */
    void noteStatistics(long bytes) {
        peakStatisticsBytes = Math.max(peakStatisticsBytes, bytes);
    }

    /**
     * Peak bytes of a calibration run: the hidden states of {@code samples × length} tokens, one
     * batch of scratch, and the statistics alive at once ({@code statisticsBytes}: for GPTQ in
     * true-sequential order, the largest input's Hessian with its GEMM buffers, {@link #run} logs
     * the measured figure).
     */
    public static long peakBytes(int hidden, int samples, int length, int batchTokens, long statisticsBytes) {
        return 4L * samples * length * hidden + 4L * batchTokens * hidden + statisticsBytes;
    }

    /** Runs {@code block} over every batch ({@code out == null}: results discarded), the observer feeding {@code stats}. */
    void runBlock(int block, List<float[]> in, List<float[]> out, WeightSubstitution weights, BiFunction<LinearInput, Integer, InputStatistics> stats) {
        runBlock(block, null, in, out, weights, stats);
    }

    /** As above, one {@code part} of the block (the whole block for null). */
    void runBlock(int block, BlockPart part, List<float[]> in, List<float[]> out, WeightSubstitution weights,
                  BiFunction<LinearInput, Integer, InputStatistics> stats) {
        runner.observe((layer, input, rows, tokens, cols) -> {
            if (layer != block) return;
            InputStatistics s = stats.apply(input, cols);
            if (s != null) s.accept(rows, tokens, cols);
        });
        try {
            for (int b = 0; b < in.size(); b++) { // the first in.size() batches
                float[] x = in.get(b);
                float[] y;
                if (out != null) y = out.get(b);
                else {
                    if (scratch.length < x.length) scratch = new float[x.length];
                    y = scratch;
                }
                if (part == null) blocks.forwardBlock(block, batches.get(b), x, y, weights);
                else blocks.forwardPart(block, part, batches.get(b), x, y, weights);
            }
        } finally {
            runner.observe(null);
        }
    }

    FloatWeight floatWeight(int block, Linear linear) {
        String name = linear.tensorName(block);
        TensorData t = source.tensors().get(name);
        if (t == null) throw new IllegalArgumentException("the model has no tensor " + name);
        if (t.type().isQuantized()) throw new IllegalArgumentException("tensor " + name + " is already quantized (" + t.type() + "): calibrated methods need float weights");
        int cols = Math.toIntExact(t.rowLength()), rows = Math.toIntExact(t.rows());
        float[] w = new float[rows * cols];
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            FloatRows.read(t, r, row);
            System.arraycopy(row, 0, w, r * cols, cols);
        }
        return new FloatWeight(name, rows, cols, w);
    }

    IntScheme scheme(String name) { return schemes.apply(name); }

    PackedIntTensors allocate(String name, IntScheme scheme, int rows, int cols) {
        return PackedIntTensors.allocate(name, scheme, rows, cols, arena);
    }

    void phase(int block, String phase) {
        int n = blocks.numBlocks();
        double elapsed = (System.nanoTime() - started) / 1e9;
        String eta = blocksDone == 0 ? "" : ", ETA " + duration(elapsed / blocksDone * (n - blocksDone));
        progress.onProgress(String.format(Locale.ROOT, "%s blk %d/%d %s%s", method, block + 1, n, phase, eta), block, n);
    }

    private static String duration(double s) {
        long t = Math.round(s);
        return t >= 60 ? (t / 60) + "m" + (t % 60) + "s" : t + "s";
    }
}
