package io.modelopt.quantization.awq;

import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.calib.BlockContext;
import io.modelopt.quantization.calib.FloatWeight;
import io.modelopt.quantization.format.IntScheme;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AWQ's scale step for one block (AutoAWQ's {@code auto_scale} then {@code apply_scale}): for each
 * {@link ScalingGroup} the plan fully quantizes, searches α ({@link ScaleSearch}) with the
 * group's linears replaced by {@link FakeQuant#scaled} candidates and the block's output MSE
 * over the calibration set as the loss (the other linears float, as AutoAWQ searches each group
 * on the float block), then folds every group's scales into the weights and norms.
 *
 * <p>The loss is the block's output, where AutoAWQ measures the group's module (attention, MLP,
 * o or down alone): the block runner runs blocks, and the block output is what the next block sees.
 */
final class AwqScaler {
    private static final Logger LOG = LoggerFactory.getLogger(AwqScaler.class);

    private AwqScaler() {}

    /**
     * A block with AWQ's scales folded in: the folded float weights of the quantized linears, the
     * scales applied to each one's columns and (v, up) divided out of its rows, and the folded norms.
     */
    record ScaledBlock(Map<Linear, FloatWeight> weights, Map<Linear, float[]> columnScales, Map<Linear, float[]> rowScales,
                       Map<String, float[]> norms, Map<ScalingGroup, ScaleSearch.Result> chosen) {}

    static ScaledBlock scale(BlockContext ctx, AwqConfig config, Function<String, float[]> tensors) {
        int block = ctx.block();
        Map<Linear, FloatWeight> w = new EnumMap<>(Linear.class);
        for (Linear l : ctx.quantizedLinears()) w.put(l, ctx.weights(l));
        List<ScalingGroup> groups = new ArrayList<>();
        for (ScalingGroup g : ScalingGroup.llama(block)) {
            if (!g.linears().stream().allMatch(w::containsKey)) continue; // the norm or producer would need a folded float consumer
            if (g.producer() != null) {
                FloatWeight p = w.get(g.producer()), c = w.get(g.linears().getFirst());
                // AutoAWQ: o after v only where v_proj and o_proj have the same shape (no grouped-query attention)
                if (p == null || p.rows() != c.cols() || (g.producer() == Linear.V && (p.cols() != c.rows()))) continue;
            }
            if (ctx.statistics(g.input()) == null) continue;
            groups.add(g);
        }
        List<float[]> reference = ctx.outputs(WeightSubstitution.NONE);
        Map<ScalingGroup, ScaleSearch.Result> chosen = new LinkedHashMap<>();
        for (ScalingGroup g : groups) {
            ctx.phase("search " + g);
            float[] mean = AwqBlockMethod.summary(ctx, g.input()).meanAbs();
            float[] wMean = config.duoScaling() ? weightMean(ctx, g, w) : null;
            ScaleSearch.Result r = ScaleSearch.search(mean, wMean, config.scaleGrid(), s -> loss(ctx, g, w, s, reference));
            LOG.debug("block {} {}: alpha {} loss {}", block, g, r.alpha(), r.loss());
            chosen.put(g, r);
        }
        Map<Linear, float[]> colScales = new EnumMap<>(Linear.class), rowScales = new EnumMap<>(Linear.class);
        Map<String, float[]> norms = new LinkedHashMap<>();
        Map<Linear, FloatWeight> folded = new EnumMap<>(Linear.class);
        for (var e : w.entrySet()) folded.put(e.getKey(), new FloatWeight(e.getValue().name(), e.getValue().rows(), e.getValue().cols(), e.getValue().data().clone()));
        for (var e : chosen.entrySet()) {
            ScalingGroup g = e.getKey();
            float[] s = e.getValue().scales();
            for (Linear l : g.linears()) {
                FloatWeight f = folded.get(l);
                ScaleFold.scaleColumns(f.data(), f.rows(), f.cols(), s);
                colScales.put(l, s);
            }
            if (g.norm() != null) {
                float[] n = tensors.apply(g.norm()).clone();
                ScaleFold.unscaleNorm(n, s);
                norms.put(g.norm(), n);
            } else {
                FloatWeight f = folded.get(g.producer());
                ScaleFold.unscaleRows(f.data(), f.rows(), f.cols(), s);
                rowScales.put(g.producer(), s);
            }
        }
        return new ScaledBlock(folded, colScales, rowScales, norms, chosen);
    }

    /** AutoAWQ's {@code w_mean}: per input column, the mean over the group's rows of |w| / max |w| of its quantization group. */
    private static float[] weightMean(BlockContext ctx, ScalingGroup g, Map<Linear, FloatWeight> w) {
        int cols = w.get(g.linears().getFirst()).cols();
        double[] sum = new double[cols];
        long rows = 0;
        for (Linear l : g.linears()) {
            FloatWeight f = w.get(l);
            int gs = ctx.scheme(l).groupSize(cols);
            for (int r = 0; r < f.rows(); r++) {
                for (int o = 0; o < cols; o += gs) {
                    float max = 0;
                    for (int k = 0; k < gs; k++) max = Math.max(max, Math.abs(f.data()[r * cols + o + k]));
                    for (int k = 0; k < gs; k++) sum[o + k] += Math.abs(f.data()[r * cols + o + k]) / (max + 1e-6);
                }
            }
            rows += f.rows();
        }
        float[] m = new float[cols];
        for (int c = 0; c < cols; c++) m[c] = (float) (sum[c] / rows);
        return m;
    }

    /** Block-output MSE with the group's linears replaced by their fake-quantized scaled candidates. */
    private static double loss(BlockContext ctx, ScalingGroup g, Map<Linear, FloatWeight> w, float[] s, List<float[]> reference) {
        try (Arena arena = Arena.ofShared()) { // shared: the compute pool's workers read it
            Map<Linear, WeightMatrix> subst = new EnumMap<>(Linear.class);
            for (Linear l : g.linears()) {
                FloatWeight f = w.get(l);
                IntScheme scheme = ctx.scheme(l);
                subst.put(l, f32(arena, f.name(), FakeQuant.scaled(f.data(), f.rows(), f.cols(), s, scheme), f.rows(), f.cols()));
            }
            int block = ctx.block();
            List<float[]> out = ctx.outputs((layer, linear, original) -> layer == block && subst.containsKey(linear) ? subst.get(linear) : original);
            double sum = 0;
            long n = 0;
            for (int b = 0; b < out.size(); b++) {
                float[] y = out.get(b), r = reference.get(b);
                for (int i = 0; i < y.length; i++) {
                    double d = (double) y[i] - r[i];
                    sum += d * d;
                }
                n += y.length;
            }
            return sum / n;
        }
    }

    /** A row-major {@code rows × cols} float matrix as an F32 weight the block runner multiplies with. */
    static WeightMatrix f32(Arena arena, String name, float[] data, int rows, int cols) {
        MemorySegment seg = arena.allocate(4L * data.length, 64);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_FLOAT, 0, data.length);
        return WeightMatrix.of(new TensorData(name, GgmlType.F32, new long[] {cols, rows}, seg));
    }
}
