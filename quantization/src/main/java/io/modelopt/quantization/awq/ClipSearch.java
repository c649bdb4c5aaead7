package io.modelopt.quantization.awq;

import io.modelopt.quantization.format.IntScheme;

/**
 * AutoAWQ's {@code _compute_best_clip}: for each output row and quantization group, the maximum
 * |w| is shrunk to {@code m·(1 − i/grid)} for {@code i = 0 … ⌊maxShrink·grid⌋ − 1}, the group
 * clamped to {@code [−m', m']} and fake-quantized, and the candidate whose group output
 * {@code Σ_k x_tk·q_k} is closest (mean squared over the sampled tokens) to the float
 * {@code Σ_k x_tk·w_k} is kept ({@code i = 0}, no clipping, unless a later one is strictly better).
 * The weights are then clamped in place; quantizing them with RTN gives AWQ's codes.
 */
public final class ClipSearch {
    private ClipSearch() {}

    /**
     * Clamps {@code w} ({@code rows × cols}, row-major) to the best clip of each group.
     *
     * @param x      sampled input rows, {@code tokens × cols} row-major
     * @return the chosen maximum per row and group ({@code rows × groups}, row-major)
     */
    public static float[] apply(float[] w, int rows, int cols, float[] x, int tokens, IntScheme s, int grid, double maxShrink) {
        if ((long) rows * cols != w.length) throw new IllegalArgumentException(w.length + " weights, not " + rows + " x " + cols);
        if ((long) tokens * cols > x.length) throw new IllegalArgumentException(x.length + " input floats, fewer than " + tokens + " x " + cols);
        int gs = s.groupSize(cols), groups = cols / gs, steps = (int) (maxShrink * grid);
        float[] best = new float[rows * groups];
        float[] cur = new float[gs], q = new float[gs], delta = new float[gs];
        for (int r = 0; r < rows; r++) {
            for (int g = 0; g < groups; g++) {
                int off = r * cols + g * gs;
                float max = 0;
                for (int k = 0; k < gs; k++) max = Math.max(max, Math.abs(w[off + k]));
                float bestMax = max;
                double bestErr = Double.POSITIVE_INFINITY;
                for (int i = 0; i < Math.max(1, steps); i++) {
                    float m = (float) (max * (1 - (double) i / grid));
                    for (int k = 0; k < gs; k++) cur[k] = Math.clamp(w[off + k], -m, m);
                    FakeQuant.group(cur, 0, gs, s, q);
                    for (int k = 0; k < gs; k++) delta[k] = q[k] - w[off + k];
                    double err = 0;
                    for (int t = 0; t < tokens; t++) {
                        int xo = t * cols + g * gs;
                        float d = 0;
                        for (int k = 0; k < gs; k++) d += x[xo + k] * delta[k];
                        err += (double) d * d;
                    }
                    err /= tokens;
                    if (err < bestErr) {
                        bestErr = err;
                        bestMax = m;
                    }
                }
                best[r * groups + g] = bestMax;
                for (int k = 0; k < gs; k++) w[off + k] = Math.clamp(w[off + k], -bestMax, bestMax);
            }
        }
        return best;
    }
}
