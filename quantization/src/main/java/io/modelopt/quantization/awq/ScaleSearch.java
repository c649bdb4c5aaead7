package io.modelopt.quantization.awq;

import java.util.function.ToDoubleFunction;

/**
 * AutoAWQ's {@code _compute_best_scale}: for {@code α = i / n}, {@code i = 0 … n − 1},
 * per-input-channel scales {@code s = max(x̄^α, 1e−4)} from the mean activation magnitude
 * {@code x̄} (with {@code duo_scaling}, AutoAWQ's default: {@code x̄^α / (w̄^(1−α) + 1e−4)},
 * {@link #duoScales}), normalized to {@code s / sqrt(max s · min s)}; the α whose
 * scales give the lowest loss wins (the first on ties, as AutoAWQ's strict {@code <}).
 * {@code α = 0} gives all ones, the unscaled quantization, so the search never does worse than
 * RTN by its own loss.
 */
public final class ScaleSearch {
    private ScaleSearch() {}

    /** The chosen exponent, its scales and its loss. */
    public record Result(double alpha, float[] scales, double loss) {}

    /** The normalized scales for exponent {@code alpha} (computed in float, as AutoAWQ in the activations' float32). */
    public static float[] scales(float[] meanAbs, double alpha) {
        float[] s = new float[meanAbs.length];
        float max = 0, min = Float.POSITIVE_INFINITY;
        for (int c = 0; c < s.length; c++) {
            float v = Math.max((float) Math.pow(meanAbs[c], alpha), 1e-4f);
            s[c] = v;
            max = Math.max(max, v);
            min = Math.min(min, v);
        }
        float norm = (float) Math.sqrt(max * min);
        for (int c = 0; c < s.length; c++) s[c] /= norm;
        return s;
    }

    /**
     * AutoAWQ's {@code duo_scaling}: {@code s = max(x̄^α / (w̄^(1−α) + 1e−4), 1e−4)}, normalized, with
     * {@code w̄} the mean over the group's weights of {@code |w| / max |w|} of the weight's quantization group.
     */
    public static float[] duoScales(float[] meanAbs, float[] weightMean, double alpha) {
        float[] x = new float[meanAbs.length];
        for (int c = 0; c < x.length; c++) x[c] = (float) (Math.pow(meanAbs[c], alpha) / (Math.pow(weightMean[c], 1 - alpha) + 1e-4));
        return scales(x, 1);
    }

    /**
     * {@code duo_scaling}'s {@code w̄}: per input channel, the mean over the rows of all the group's
     * linears (concatenated, as AutoAWQ's {@code torch.cat}) of {@code |w| / (max |w| + 1e−6)}, the
     * maximum taken over the weight's quantization group of {@code groupSize} columns.
     *
     * @param weights row-major matrices of {@code cols} columns each
     */
    public static float[] weightMean(int cols, int groupSize, float[]... weights) {
        if (groupSize <= 0 || cols % groupSize != 0) throw new IllegalArgumentException("group size " + groupSize + " does not divide " + cols + " columns");
        double[] sum = new double[cols];
        long rows = 0;
        for (float[] f : weights) {
            if (f.length % cols != 0) throw new IllegalArgumentException("a weight of " + f.length + " values is not a matrix of " + cols + " columns");
            for (int r = 0; r < f.length / cols; r++) {
                for (int o = 0; o < cols; o += groupSize) {
                    float max = 0;
                    for (int k = 0; k < groupSize; k++) max = Math.max(max, Math.abs(f[r * cols + o + k]));
                    for (int k = 0; k < groupSize; k++) sum[o + k] += Math.abs(f[r * cols + o + k]) / (max + 1e-6);
                }
            }
            rows += f.length / cols;
        }
        float[] m = new float[cols];
        for (int c = 0; c < cols; c++) m[c] = (float) (sum[c] / rows);
        return m;
    }

    /** As {@link #search(float[], int, ToDoubleFunction)}, with {@link #duoScales} when {@code weightMean} is not null. */
    public static Result search(float[] meanAbs, float[] weightMean, int grid, ToDoubleFunction<float[]> loss) {
        if (weightMean == null) return search(meanAbs, grid, loss);
        Result best = null;
        for (int i = 0; i < grid; i++) {
            double alpha = (double) i / grid;
            float[] s = duoScales(meanAbs, weightMean, alpha);
            double l = loss.applyAsDouble(s);
            if (Double.isNaN(l)) throw new IllegalArgumentException("loss at alpha " + alpha + " is NaN");
            if (best == null || l < best.loss()) best = new Result(alpha, s, l);
        }
        return best;
    }

    /**
     * @param meanAbs per input channel, mean |x| over the calibration tokens
     * @param grid    number of α candidates
     * @param loss    the error of quantizing with the given scales (AWQ: the MSE of the output of the module the group feeds)
     * @throws IllegalArgumentException for a non-finite mean or loss, naming the channel or α
     */
    public static Result search(float[] meanAbs, int grid, ToDoubleFunction<float[]> loss) {
        for (int c = 0; c < meanAbs.length; c++) {
            if (!Float.isFinite(meanAbs[c]) || meanAbs[c] < 0) throw new IllegalArgumentException("mean |x| of channel " + c + " is " + meanAbs[c]);
        }
        Result best = null;
        for (int i = 0; i < grid; i++) {
            double alpha = (double) i / grid;
            float[] s = scales(meanAbs, alpha);
            double l = loss.applyAsDouble(s);
            if (Double.isNaN(l)) throw new IllegalArgumentException("loss at alpha " + alpha + " is NaN");
            if (best == null || l < best.loss()) best = new Result(alpha, s, l);
        }
        return best;
    }
}
