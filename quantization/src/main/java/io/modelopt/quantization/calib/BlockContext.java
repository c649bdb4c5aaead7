package io.modelopt.quantization.calib;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One decoder block as a {@link BlockMethod} sees it: the calibration batches and the hidden
 * states entering the block (outputs of the already-quantized blocks before it), the statistics
 * collected with the block's float weights, the float weights, the schemes the layer policy
 * gives its linears, and ways to rerun the block (with substituted weights) for statistics or
 * outputs. Valid during {@link BlockMethod#quantizeBlock} only.
 */
public final class BlockContext {
    private final int block;
    private final BlockRunner runner;
    private final List<Batch> batches;
    private final List<float[]> inputs;
    private final Map<LinearInput, InputStatistics> statistics;
    private final BlockwiseCalibrator owner;

    BlockContext(int block, BlockRunner runner, List<Batch> batches, List<float[]> inputs, Map<LinearInput, InputStatistics> statistics,
                 BlockwiseCalibrator owner) {
        this.block = block;
        this.runner = runner;
        this.batches = batches;
        this.inputs = inputs;
        this.statistics = statistics;
        this.owner = owner;
    }

    /** The block's index, 0-based. */
    public int block() { return block; }

    public int numBlocks() { return runner.numBlocks(); }

    /** The model's block runner (one call at a time; its observer belongs to the calibrator). */
    public BlockRunner runner() { return runner; }

    /** The calibration batches (whole sequences each), in order. */
    public List<Batch> batches() { return batches; }

    /** Per batch, the hidden states entering this block ({@code batch.size() × hiddenSize}); do not modify. */
    public List<float[]> inputs() { return Collections.unmodifiableList(inputs); }

    /** What {@link BlockMethod#statistics} made for {@code input}, filled with the block's float weights; null if it made none. */
    public InputStatistics statistics(LinearInput input) { return statistics.get(input); }

    /** The linear's float weights as the model holds them (decoded once per call: keep the result). */
    public FloatWeight weights(Linear linear) { return owner.floatWeight(block, linear); }

    /** The scheme the layer policy gives this linear, or null when it stays as it is. */
    public IntScheme scheme(Linear linear) { return owner.scheme(linear.tensorName(block)); }

    /** The linears of this block the policy quantizes, in forward order (q, k, v, o, gate, up, down). */
    public List<Linear> quantizedLinears() {
        List<Linear> out = new ArrayList<>();
        for (Linear l : Linear.values()) if (l != Linear.OUTPUT && scheme(l) != null) out.add(l);
        return out;
    }

    /** Tensors for the quantized {@code linear}, owned by the output model's arena. */
    public PackedIntTensors allocate(Linear linear, IntScheme scheme, int rows, int cols) {
        return owner.allocate(linear.tensorName(block), scheme, rows, cols);
    }

    /**
     * Reruns the block over the calibration set with {@code weights} and returns fresh statistics
     * of the inputs {@code factory} gives one for (GPTQ's true-sequential order: the inputs of
     * o_proj with q, k, v already quantized).
     */
    public Map<LinearInput, InputStatistics> collect(WeightSubstitution weights, Function<LinearInput, InputStatistics> factory) {
        Map<LinearInput, InputStatistics> out = new EnumMap<>(LinearInput.class);
        owner.runBlock(block, inputs, null, weights, (input, cols) -> {
            InputStatistics s = out.get(input);
            if (s == null && !out.containsKey(input)) {
                s = factory.apply(input);
                out.put(input, s);
            }
            return s;
        });
        out.values().removeIf(java.util.Objects::isNull);
        long fresh = 0;
        for (InputStatistics s : out.values()) fresh += s.bytes();
        noteWorkingBytes(fresh);
        return out;
    }

    /**
     * Tells the calibrator that the method holds {@code bytes} of statistics or solver matrices
     * beside the collect pass's statistics (a fresh Hessian, a copy of one): the logged peak is the
     * largest such sum.
     */
    public void noteWorkingBytes(long bytes) {
        long held = 0;
        for (InputStatistics s : statistics.values()) if (s != null) held += s.bytes();
        owner.noteStatistics(held + bytes);
    }

    /** The block's outputs over the calibration set with {@code weights} (AWQ's loss), per batch. */
    public List<float[]> outputs(WeightSubstitution weights) {
        List<float[]> out = new ArrayList<>();
        for (float[] in : inputs) out.add(new float[in.length]);
        owner.runBlock(block, inputs, out, weights, (input, cols) -> null);
        return out;
    }

    /**
     * One part of the block over {@code in} (per batch, the hidden states entering the part: the
     * block's {@link #inputs()} for {@link BlockPart#ATTENTION}, the attention part's outputs for
     * {@link BlockPart#MLP}; of the first {@code in.size()} batches, or all) with {@code weights};
     * AWQ's module-level loss.
     */
    public List<float[]> outputs(BlockPart part, List<float[]> in, WeightSubstitution weights) {
        List<float[]> out = new ArrayList<>();
        for (float[] x : in) out.add(new float[x.length]);
        outputs(part, in, out, weights);
        return out;
    }

    /** As {@link #outputs(BlockPart, List, WeightSubstitution)} into {@code out} (per batch, arrays at least as long as the inputs). */
    public void outputs(BlockPart part, List<float[]> in, List<float[]> out, WeightSubstitution weights) {
        java.util.Objects.requireNonNull(part, "part");
        if (in.isEmpty() || in.size() > batches.size() || out.size() != in.size()) {
            throw new IllegalArgumentException(in.size() + " inputs and " + out.size() + " outputs for " + batches.size() + " batches");
        }
        owner.runBlock(block, part, in, out, weights, (input, cols) -> null);
    }

    /** Reports a phase of this block ({@code "collect"}, {@code "search"}, {@code "quantize attn_q"}) to the progress listener. */
    public void phase(String phase) { owner.phase(block, phase); }
}
