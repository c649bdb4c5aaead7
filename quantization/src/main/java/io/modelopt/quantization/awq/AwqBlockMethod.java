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
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
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
 */
public final class AwqBlockMethod implements BlockMethod, AutoCloseable {
    private final AwqConfig config;
    private final Function<String, float[]> tensors;
    private Arena outputArena;

    /**
     * @param tensors the float model's tensors by name, row-major F32 (the norms AWQ folds into)
     */
    public AwqBlockMethod(AwqConfig config, Function<String, float[]> tensors) {
        this.config = Objects.requireNonNull(config, "config");
        this.tensors = Objects.requireNonNull(tensors, "tensors");
    }

    @Override public String name() { return "awq"; }

    @Override public InputStatistics statistics(int block, LinearInput input, int cols) {
        return input == LinearInput.OUTPUT ? null : new ActivationSummary(cols, config.clipSampleTokens());
    }

    @Override public BlockResult quantizeBlock(BlockContext ctx) {
        AwqScaler.ScaledBlock scaled = AwqScaler.scale(ctx, config, tensors);
        if (outputArena != null) outputArena.close();
        outputArena = Arena.ofShared();
        Map<Linear, PackedIntTensors> quantized = new EnumMap<>(Linear.class);
        Map<Linear, WeightMatrix> equivalent = new EnumMap<>(Linear.class);
        for (var e : scaled.weights().entrySet()) {
            Linear l = e.getKey();
            FloatWeight f = e.getValue();
            IntScheme scheme = ctx.scheme(l);
            float[] w = f.data();
            if (config.clip() && l != Linear.Q && l != Linear.K) {
                ctx.phase("clip " + l.tensorName(ctx.block()));
                ActivationSummary a = (ActivationSummary) ctx.statistics(l.input());
                if (a != null && a.sampledTokens() > 0) {
                    float[] x = a.sample();
                    float[] s = scaled.columnScales().get(l);
                    if (s != null) ScaleFold.unscaleColumns(x, a.sampledTokens(), f.cols(), s); // the folded model's input: x / s
                    ClipSearch.apply(w, f.rows(), f.cols(), x, a.sampledTokens(), scheme, config.clipGrid(), config.maxShrink());
                }
            }
            ctx.phase("quantize " + l.tensorName(ctx.block()));
            PackedIntTensors t = ctx.allocate(l, scheme, f.rows(), f.cols());
            float[] back = new float[w.length];
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
            quantized.put(l, t);
            float[] cs = scaled.columnScales().get(l), rs = scaled.rowScales().get(l);
            if (cs != null) ScaleFold.unscaleColumns(back, f.rows(), f.cols(), cs);
            if (rs != null) ScaleFold.scaleRows(back, f.rows(), f.cols(), rs);
            equivalent.put(l, AwqScaler.f32(outputArena, f.name(), back, f.rows(), f.cols()));
        }
        int block = ctx.block();
        WeightSubstitution next = (layer, linear, original) -> layer == block && equivalent.containsKey(linear) ? equivalent.get(linear) : original;
        return new BlockResult(quantized, scaled.norms(), next);
    }

    /** Frees the last block's output matrices. */
    @Override public void close() {
        if (outputArena != null) outputArena.close();
        outputArena = null;
    }
}
