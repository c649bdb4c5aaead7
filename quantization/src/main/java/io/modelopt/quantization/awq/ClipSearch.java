package io.modelopt.quantization.awq;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntScheme;

/**
 * AutoAWQ's {@code _compute_best_clip}: for each output row and quantization group, the maximum
 * |w| is shrunk to {@code m·(1 − i/grid)} for {@code i = 0 … ⌊maxShrink·grid⌋ − 1}, the group
 * clamped to {@code [−m', m']} and fake-quantized, and the candidate whose group output
 * {@code Σ_k x_tk·q_k} is closest (mean squared over the sampled tokens) to the float
 * {@code Σ_k x_tk·w_k} is kept ({@code i = 0}, no clipping, unless a later one is strictly better).
 * The weights are then clamped in place; quantizing them with RTN gives AWQ's codes.
 *
 * <p>The error of a candidate with weight change {@code δ = q − w} is {@code (1/T) Σ_t (x_t·δ)²}.
 * With more sampled tokens {@code T} than the group has columns {@code g}, it is computed as
 * {@code δᵀ G δ} from the group's Gram matrix {@code G = (1/T) Σ_t x_t x_tᵀ} (in double): {@code g²}
 * operations per candidate instead of {@code T·g}, the same number in exact arithmetic. Otherwise
 * it sums the tokens' errors directly, in float, as AutoAWQ does. Rows are searched in parallel.
 */
public final class ClipSearch {
    private ClipSearch() {}

    /**
     * The sampled inputs of one linear as the search reads them: per quantization group the Gram
     * matrix of its columns, or the rows transposed to {@code cols × tokens} (so that a candidate's
     * per-token errors accumulate with unit stride). Built once per input, shared by the linears
     * that read it (gate and up).
     */
    public static final class Inputs {
        final int cols, groupSize, tokens;
        /** {@code groups × g × g}, row-major per group, or null. */
        final double[] gram;
        /** {@code cols × tokens}, or null. */
        final float[] transposed;

        private Inputs(int cols, int groupSize, int tokens, double[] gram, float[] transposed) {
            this.cols = cols;
            this.groupSize = groupSize;
            this.tokens = tokens;
            this.gram = gram;
            this.transposed = transposed;
        }

        /**
         * @param x      sampled input rows, {@code tokens × cols} row-major
         * @param pool   runs the Gram products; null for the calling thread
         */
        public static Inputs of(float[] x, int tokens, int cols, int groupSize, ComputePool pool) {
            if (tokens < 1) throw new IllegalArgumentException("no sampled tokens");
            if (cols % groupSize != 0) throw new IllegalArgumentException("group size " + groupSize + " does not divide " + cols + " columns");
            if ((long) tokens * cols > x.length) throw new IllegalArgumentException(x.length + " input floats, fewer than " + tokens + " x " + cols);
            int gs = groupSize, groups = cols / gs;
            if (tokens <= gs) {
                float[] xt = new float[cols * tokens];
                for (int t = 0; t < tokens; t++) for (int k = 0; k < cols; k++) xt[k * tokens + t] = x[t * cols + k];
                return new Inputs(cols, gs, tokens, null, xt);
            }
            double[] gram = new double[Math.multiplyExact(cols, gs)];
            double inv = 1.0 / tokens;
            ComputePool.RangeTask task = (start, end, worker) -> {
                double[] row = new double[gs];
                for (int g = start; g < end; g++) {
                    int go = g * gs * gs;
                    for (int t = 0; t < tokens; t++) {
                        int xo = t * cols + g * gs;
                        for (int k = 0; k < gs; k++) row[k] = x[xo + k];
                        for (int a = 0; a < gs; a++) {
                            double xa = row[a];
                            int o = go + a * gs;
                            for (int b = 0; b < gs; b++) gram[o + b] += xa * row[b];
                        }
                    }
                    for (int i = go; i < go + gs * gs; i++) gram[i] *= inv;
                }
            };
            run(pool, groups, task);
            return new Inputs(cols, gs, tokens, gram, null);
        }

    }

    /**
     * Clamps {@code w} ({@code rows × cols}, row-major) to the best clip of each group.
     *
     * @return the chosen maximum per row and group ({@code rows × groups}, row-major)
     */
    public static float[] apply(float[] w, int rows, int cols, Inputs in, IntScheme s, int grid, double maxShrink, ComputePool pool) {
        if ((long) rows * cols != w.length) throw new IllegalArgumentException(w.length + " weights, not " + rows + " x " + cols);
        int gs = s.groupSize(cols), groups = cols / gs, steps = Math.max(1, (int) (maxShrink * grid));
        if (in.cols != cols || in.groupSize != gs) {
            throw new IllegalArgumentException("inputs of " + in.cols + " columns in groups of " + in.groupSize + " for weights of " + cols + " in groups of " + gs);
        }
        float[] best = new float[rows * groups];
        run(pool, rows, (start, end, worker) -> {
            float[] cur = new float[gs], q = new float[gs], delta = new float[gs], e = new float[in.tokens], bound = new float[steps];
            double[] d = new double[steps * gs], y = new double[steps * gs], err = new double[steps];
            for (int r = start; r < end; r++) {
                for (int g = 0; g < groups; g++) {
                    int off = r * cols + g * gs;
                    float max = 0;
                    for (int k = 0; k < gs; k++) max = Math.max(max, Math.abs(w[off + k]));
                    for (int i = 0; i < steps; i++) {
                        float m = (float) (max * (1 - (double) i / grid));
                        bound[i] = m;
                        for (int k = 0; k < gs; k++) cur[k] = Math.clamp(w[off + k], -m, m);
                        FakeQuant.group(cur, 0, gs, s, q);
                        if (in.gram != null) {
                            for (int k = 0; k < gs; k++) d[i * gs + k] = (double) q[k] - w[off + k];
                        } else {
                            for (int k = 0; k < gs; k++) delta[k] = q[k] - w[off + k];
                            err[i] = direct(in.transposed, g * gs, in.tokens, delta, e, gs);
                        }
                    }
                    if (in.gram != null) CandidateErrors.compute(in.gram, g * gs * gs, d, y, steps, gs, err);
                    float bestMax = max;
                    double bestErr = Double.POSITIVE_INFINITY;
                    for (int i = 0; i < steps; i++) {
                        if (err[i] < bestErr) {
                            bestErr = err[i];
                            bestMax = bound[i];
                        }
                    }
                    best[r * groups + g] = bestMax;
                    for (int k = 0; k < gs; k++) w[off + k] = Math.clamp(w[off + k], -bestMax, bestMax);
                }
            }
        });
        return best;
    }

    /** {@code (1/T) Σ_t (x_t·δ)²}, the tokens' dot products accumulated over the group's columns in order (float, as AutoAWQ). */
    private static double direct(float[] xt, int col0, int tokens, float[] delta, float[] e, int n) {
        java.util.Arrays.fill(e, 0, tokens, 0f);
        for (int k = 0; k < n; k++) {
            float dk = delta[k];
            int o = (col0 + k) * tokens;
            for (int t = 0; t < tokens; t++) e[t] += xt[o + t] * dk;
        }
        double err = 0;
        for (int t = 0; t < tokens; t++) err += (double) e[t] * e[t];
        return err / tokens;
    }

    private static void run(ComputePool pool, int n, ComputePool.RangeTask task) {
        if (pool == null || pool.threads() == 1) task.run(0, n, 0);
        else pool.parallelFor(n, task);
    }
}
