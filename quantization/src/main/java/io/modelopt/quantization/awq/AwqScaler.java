package io.modelopt.quantization.awq;

import io.modelopt.core.engine.BlockPart;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.MatMul;
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
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AWQ's scale step for one block (AutoAWQ's {@code auto_scale} then {@code apply_scale}): for each
 * {@link ScalingGroup} the plan fully quantizes, searches α ({@link ScaleSearch}) with the
 * group's linears replaced by {@link FakeQuant#scaled} candidates, the other linears float (as
 * AutoAWQ searches each group on the float block), then folds every group's scales into the
 * weights and norms.
 *
 * <p>The loss is AutoAWQ's: the mean squared error of the output of the module the group feeds
 * ({@code module2inspect}) over the calibration set.
 * <ul>
 *   <li>q/k/v: the attention's output, one {@link BlockPart#ATTENTION} pass per candidate (the
 *       residual added to both outputs cancels in the difference);
 *   <li>gate/up: the MLP's output, one {@link BlockPart#MLP} pass from the float attention's output;
 *   <li>o and down, modules of one linear: {@code (1/rows) Σ_r Δw_r (XᵀX/T) Δw_rᵀ} with
 *       {@code ΔW = candidate − W}, from the input's Gram matrix (the Hessian GPTQ accumulates) as
 *       one GEMM of {@code rows × cols²}: the same number as the tokens' errors in exact arithmetic,
 *       at a cost that does not grow with the calibration set.
 * </ul>
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

    static ScaledBlock scale(BlockContext ctx, AwqConfig config, Function<String, float[]> tensors, ComputePool pool) {
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
        int searchBatches = searchBatches(ctx, config.searchTokens());
        if (block == 0 && searchBatches < ctx.batches().size()) {
            long all = 0, searched = 0;
            for (int b = 0; b < ctx.batches().size(); b++) {
                all += ctx.batches().get(b).size();
                if (b < searchBatches) searched += ctx.batches().get(b).size();
            }
            LOG.info("awq: the alpha search's attention and MLP losses run on the first {} of {} calibration tokens (searchTokens {})", searched, all, config.searchTokens());
        }
        Losses losses = new Losses(ctx, w, pool, searchBatches);
        Map<ScalingGroup, ScaleSearch.Result> chosen = new LinkedHashMap<>();
        for (ScalingGroup g : groups) {
            ctx.phase("search " + g);
            float[] mean = AwqBlockMethod.summary(ctx, g.input()).meanAbs();
            float[] wMean = config.duoScaling() ? weightMean(ctx, g, w) : null;
            ScaleSearch.Result r = ScaleSearch.search(mean, wMean, config.scaleGrid(), losses.of(g));
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

    /** How many of the first calibration batches hold at most {@code tokens} tokens (at least one; all for 0). */
    static int searchBatches(BlockContext ctx, int tokens) {
        int n = ctx.batches().size();
        if (tokens == 0) return n;
        long sum = 0;
        for (int b = 0; b < n; b++) {
            sum += ctx.batches().get(b).size();
            if (sum > tokens) return Math.max(1, b);
        }
        return n;
    }

    /** AutoAWQ's {@code w_mean}: per input column, the mean over the group's rows of |w| / max |w| of its quantization group. */
    private static float[] weightMean(BlockContext ctx, ScalingGroup g, Map<Linear, FloatWeight> w) {
        int cols = w.get(g.linears().getFirst()).cols();
        float[][] weights = g.linears().stream().map(l -> w.get(l).data()).toArray(float[][]::new);
        return ScaleSearch.weightMean(cols, ctx.scheme(g.linears().getFirst()).groupSize(cols), weights);
    }

    /** The module-output losses of one block's groups, with the float references computed once. */
    private static final class Losses {
        private final BlockContext ctx;
        private final Map<Linear, FloatWeight> w;
        private final ComputePool pool;
        /** The block inputs of the batches the attention and MLP losses run on. */
        private final List<float[]> inputs;
        private final Map<Linear, float[]> candidates = new EnumMap<>(Linear.class);
        private List<float[]> attention, block, outputs;

        /** @param batches the first calibration batches the attention and MLP losses run on */
        Losses(BlockContext ctx, Map<Linear, FloatWeight> w, ComputePool pool, int batches) {
            this.ctx = ctx;
            this.w = w;
            this.pool = pool;
            this.inputs = ctx.inputs().subList(0, batches);
        }

        ToDoubleFunction<float[]> of(ScalingGroup g) {
            return switch (g.input()) {
                case QKV -> s -> part(g, s, BlockPart.ATTENTION, inputs, attention());
                case GATE_UP -> s -> part(g, s, BlockPart.MLP, attention(), block());
                case ATTN_OUTPUT, DOWN -> linear(g);
                default -> throw new IllegalArgumentException("no AWQ loss for a group reading " + g.input());
            };
        }

        /** The float attention part's outputs (the MLP part's inputs). */
        private List<float[]> attention() {
            if (attention == null) attention = ctx.outputs(BlockPart.ATTENTION, inputs, WeightSubstitution.NONE);
            return attention;
        }

        private List<float[]> block() {
            if (block == null) block = ctx.outputs(BlockPart.MLP, attention(), WeightSubstitution.NONE);
            return block;
        }

        /** MSE of {@code part}'s output with the group's linears replaced by their fake-quantized scaled candidates. */
        private double part(ScalingGroup g, float[] s, BlockPart part, List<float[]> in, List<float[]> reference) {
            try (Arena arena = Arena.ofShared()) { // shared: the compute pool's workers read it
                Map<Linear, WeightMatrix> subst = new EnumMap<>(Linear.class);
                for (Linear l : g.linears()) {
                    FloatWeight f = w.get(l);
                    float[] q = candidate(l, f.data().length);
                    FakeQuant.scaled(f.data(), f.rows(), f.cols(), s, ctx.scheme(l), q, pool);
                    subst.put(l, f32(arena, f.name(), q, f.rows(), f.cols()));
                }
                int layer = ctx.block();
                if (outputs == null) {
                    outputs = new ArrayList<>();
                    for (float[] x : in) outputs.add(new float[x.length]);
                }
                ctx.outputs(part, in, outputs, (b, linear, original) -> b == layer && subst.containsKey(linear) ? subst.get(linear) : original);
                double sum = 0;
                long n = 0;
                for (int b = 0; b < in.size(); b++) {
                    float[] y = outputs.get(b), r = reference.get(b);
                    for (int i = 0; i < r.length; i++) {
                        double d = (double) y[i] - r[i];
                        sum += d * d;
                    }
                    n += r.length;
                }
                return sum / n;
            }
        }

        /** The one linear's output MSE from its input's Gram matrix, {@code (1/rows) Σ_r Δw_r G Δw_rᵀ}. */
        private ToDoubleFunction<float[]> linear(ScalingGroup g) {
            Linear l = g.linears().getFirst();
            FloatWeight f = w.get(l);
            int rows = f.rows(), cols = f.cols();
            double[] h = AwqBlockMethod.hessian(ctx, g.input()).hessian(); // 2XᵀX/T
            float[] gram = new float[h.length];
            for (int i = 0; i < h.length; i++) gram[i] = (float) (h[i] / 2);
            float[] product = new float[cols * rows];
            IntScheme scheme = ctx.scheme(l);
            return s -> {
                float[] delta = candidate(l, f.data().length);
                FakeQuant.scaled(f.data(), rows, cols, s, scheme, delta, pool);
                for (int i = 0; i < f.data().length; i++) delta[i] -= f.data()[i];
                return gramLoss(delta, rows, cols, gram, product, pool);
            };
        }

        /** The candidate buffer of {@code l}, reused across α (the search allocates nothing per candidate the size of a matrix). */
        private float[] candidate(Linear l, int length) {
            return candidates.computeIfAbsent(l, k -> new float[length]);
        }
    }

    /**
     * {@code (1/rows) Σ_r Δw_r G Δw_rᵀ}: with {@code G = XᵀX/T}, the mean over the {@code T} tokens and
     * the rows of {@code (x_t·Δw_r)²}, the output MSE of a linear whose weights changed by {@code Δ}.
     *
     * @param delta   {@code rows × cols}, row-major
     * @param gram    {@code cols × cols}, symmetric
     * @param product scratch of {@code cols × rows} floats
     */
    static double gramLoss(float[] delta, int rows, int cols, float[] gram, float[] product, ComputePool pool) {
        try (Arena arena = Arena.ofShared()) {
            // product[t·rows + r] = Σ_k ΔW[r][k]·G[t][k] = (ΔW·G)[r][t], G symmetric
            MatMul.matmul(pool, f32(arena, "delta", delta, rows, cols), gram, cols, product);
        }
        double sum = 0;
        for (int t = 0; t < cols; t++) {
            for (int r = 0; r < rows; r++) sum += (double) product[t * rows + r] * delta[r * cols + t];
        }
        return sum / rows;
    }

    /** A row-major {@code rows × cols} float matrix as an F32 weight the block runner multiplies with. */
    static WeightMatrix f32(Arena arena, String name, float[] data, int rows, int cols) {
        MemorySegment seg = arena.allocate(4L * data.length, 64);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_FLOAT, 0, data.length);
        return WeightMatrix.of(new TensorData(name, GgmlType.F32, new long[] {cols, rows}, seg));
    }
}
