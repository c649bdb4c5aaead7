package io.modelopt.quantization.awq;

import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.quantization.calib.BlockContext;
import io.modelopt.quantization.calib.BlockMethod;
import io.modelopt.quantization.calib.BlockResult;
import io.modelopt.quantization.calib.FloatWeight;
import io.modelopt.quantization.calib.InputStatistics;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import io.modelopt.quantization.gptq.GptqConfig;
import io.modelopt.quantization.gptq.GptqSolver;
import io.modelopt.quantization.gptq.HessianAccumulator;
import io.modelopt.quantization.rtn.RtnQuantizer;
import java.lang.foreign.Arena;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * AWQ for one block, in AutoAWQ's order: the scale search and fold ({@link AwqScaler}), the clip
 * search per linear on the scaled inputs ({@link ClipSearch}; q and k are skipped, as AutoAWQ
 * skips them, their error being seen through the softmax), then RTN of the clipped folded weights.
 *
 * <p>The folded norms go out as float tensors. The next block must see what the quantized model
 * computes, but the block runner cannot substitute a norm: so the block's output is computed
 * with each quantized matrix moved back to the original basis ({@code diag(rowScale)·Q·diag(1/colScale)}),
 * equal to the folded model within float rounding. Those matrices live until the next block's
 * call (or {@link #close}).
 *
 * <p><b>AWQ then GPTQ</b> (with a {@link GptqConfig}): the same scales and fold, then GPTQ's
 * rounding of the folded weights instead of the clip search and RTN, with the Hessian of the
 * folded model's inputs {@code x / s}, {@code H'ᵢⱼ = Hᵢⱼ / (sᵢ sⱼ)}, from the float block's pass
 * (all four inputs at once, not GPTQ's true-sequential order: the scales were chosen on the float
 * block too).
 */
public final class AwqBlockMethod implements BlockMethod, AutoCloseable {
    private final AwqConfig config;
    private final Function<String, float[]> tensors;
    private final GptqConfig gptq;
    private final ComputePool pool;
    private Arena outputArena;

    /**
     * @param gptq    GPTQ's settings for {@code awq+gptq} (GPTQ's rounding instead of the clip search and RTN), or null for AWQ
     * @param pool    runs the searches' products
     * @param tensors the float model's tensors by name, row-major F32 (the norms AWQ folds into)
     */
    public AwqBlockMethod(AwqConfig config, GptqConfig gptq, ComputePool pool, Function<String, float[]> tensors) {
        this.config = Objects.requireNonNull(config, "config");
        this.tensors = Objects.requireNonNull(tensors, "tensors");
        this.gptq = gptq;
        this.pool = Objects.requireNonNull(pool, "pool");
    }

    @Override public String name() { return gptq == null ? "awq" : "awq+gptq"; }

    @Override public InputStatistics statistics(int block, LinearInput input, int cols) {
        if (input == LinearInput.OUTPUT) return null;
        ActivationSummary a = new ActivationSummary(cols, config.clipSampleTokens());
        // GPTQ needs every input's Hessian; AWQ's own loss for o and down (modules of one linear) reads their inputs' Gram matrix
        boolean hessian = gptq != null || input == LinearInput.ATTN_OUTPUT || input == LinearInput.DOWN;
        return hessian ? new WithHessian(a, new HessianAccumulator(pool, cols)) : a;
    }

    /** AWQ's summary and GPTQ's Hessian of one input, fed together. */
    record WithHessian(ActivationSummary summary, HessianAccumulator hessian) implements InputStatistics {
        @Override public void accept(float[] rows, int tokens, int cols) {
            summary.accept(rows, tokens, cols);
            hessian.accept(rows, tokens, cols);
        }

        @Override public long bytes() { return summary.bytes() + hessian.bytes(); }
    }

    /** The AWQ summary of {@code input} in {@code ctx}, or null. */
    static ActivationSummary summary(BlockContext ctx, LinearInput input) {
        InputStatistics s = ctx.statistics(input);
        return s instanceof WithHessian w ? w.summary() : (ActivationSummary) s;
    }

    /** The Hessian ({@code 2XᵀX/T}) of {@code input} in {@code ctx}. */
    static HessianAccumulator hessian(BlockContext ctx, LinearInput input) {
        if (ctx.statistics(input) instanceof WithHessian w) return w.hessian();
        throw new IllegalStateException("no Gram matrix was collected for " + input);
    }

    @Override public BlockResult quantizeBlock(BlockContext ctx) {
        AwqScaler.ScaledBlock scaled = AwqScaler.scale(ctx, config, tensors, pool);
        Map<String, ClipSearch.Inputs> clipInputs = new java.util.HashMap<>();
        if (outputArena != null) outputArena.close();
        outputArena = Arena.ofShared();
        Map<Linear, PackedIntTensors> quantized = new EnumMap<>(Linear.class);
        Map<Linear, WeightMatrix> equivalent = new EnumMap<>(Linear.class);
        for (var e : scaled.weights().entrySet()) {
            Linear l = e.getKey();
            FloatWeight f = e.getValue();
            IntScheme scheme = ctx.scheme(l);
            float[] w = f.data();
            float[] cs = scaled.columnScales().get(l), rs = scaled.rowScales().get(l);
            PackedIntTensors t = ctx.allocate(l, scheme, f.rows(), f.cols());
            float[] back = new float[w.length];
            if (gptq != null) {
                ctx.phase("quantize " + l.tensorName(ctx.block()));
                double[] h = ((WithHessian) ctx.statistics(l.input())).hessian().hessian();
                if (cs != null) {
                    int n = f.cols();
                    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) h[i * n + j] /= (double) cs[i] * cs[j];
                }
                GptqSolver.quantize(f.name(), w, f.rows(), f.cols(), h, scheme, gptq, pool, (r, row) -> {
                    t.writeRow(r, row);
                    for (int k = 0; k < f.cols(); k++) back[r * f.cols() + k] = row.value(k);
                });
                finish(l, f, back, cs, rs, quantized, t, equivalent);
                continue;
            }
            if (config.clip() && l != Linear.Q && l != Linear.K) {
                ctx.phase("clip " + l.tensorName(ctx.block()));
                ActivationSummary a = summary(ctx, l.input());
                if (a != null && a.sampledTokens() > 0) {
                    float[] s = scaled.columnScales().get(l);
                    // gate and up share their input and its scales: its Gram matrices are made once
                    ClipSearch.Inputs in = clipInputs.computeIfAbsent(l.input() + "/" + scheme.groupSize(f.cols()), key -> {
                        float[] x = a.sample();
                        if (s != null) ScaleFold.unscaleColumns(x, a.sampledTokens(), f.cols(), s); // the folded model's input: x / s
                        return ClipSearch.Inputs.of(x, a.sampledTokens(), f.cols(), scheme.groupSize(f.cols()), pool);
                    });
                    ClipSearch.apply(w, f.rows(), f.cols(), in, scheme, config.clipGrid(), config.maxShrink(), pool);
                }
            }
            ctx.phase("quantize " + l.tensorName(ctx.block()));
            IntRow row = new IntRow(scheme, f.cols());
            for (int r = 0; r < f.rows(); r++) {
                try {
                    RtnQuantizer.quantizeRow(w, r * f.cols(), f.cols(), scheme, false, row);
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException("tensor " + f.name() + " row " + r + ": " + ex.getMessage(), ex);
                }
                t.writeRow(r, row);
                for (int k = 0; k < f.cols(); k++) back[r * f.cols() + k] = row.value(k);
            }
            finish(l, f, back, cs, rs, quantized, t, equivalent);
        }
        int block = ctx.block();
        WeightSubstitution next = (layer, linear, original) -> layer == block && equivalent.containsKey(linear) ? equivalent.get(linear) : original;
        return new BlockResult(quantized, scaled.norms(), next);
    }

    /** Records {@code t} and its decoded weights {@code back}, moved back to the original basis for the next block's input. */
    private void finish(Linear l, FloatWeight f, float[] back, float[] cs, float[] rs, Map<Linear, PackedIntTensors> quantized, PackedIntTensors t,
                        Map<Linear, WeightMatrix> equivalent) {
        quantized.put(l, t);
        if (cs != null) ScaleFold.unscaleColumns(back, f.rows(), f.cols(), cs);
        if (rs != null) ScaleFold.scaleRows(back, f.rows(), f.cols(), rs);
        equivalent.put(l, AwqScaler.f32(outputArena, f.name(), back, f.rows(), f.cols()));
    }

    /** Frees the last block's output matrices. */
    @Override public void close() {
        if (outputArena != null) outputArena.close();
        outputArena = null;
    }
}
