package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.quantization.format.IntScheme;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * AWQ's α search on a fixed linear layer with a few salient input channels, against a float64
 * transcription of AutoAWQ's {@code _compute_best_scale} (loss: the layer output's MSE).
 */
class ScaleSearchTest {
    static final int ROWS = 48, COLS = 256, TOKENS = 200;

    @Test void chosenAlphaAndScalesMatchFloat64Reference() {
        chosenAlphaAndScalesMatchFloat64Reference(false);
    }

    /** The same with AutoAWQ's default {@code duo_scaling}: the weights' relative magnitude per channel divides x̄^α. */
    @Test void chosenAlphaAndDuoScalesMatchFloat64Reference() {
        chosenAlphaAndScalesMatchFloat64Reference(true);
    }

    private static void chosenAlphaAndScalesMatchFloat64Reference(boolean duo) {
        for (IntScheme s : new IntScheme[] {new IntScheme(4, 128, false, IntScheme.ScaleType.F32), new IntScheme(3, 64, false, IntScheme.ScaleType.F32),
                new IntScheme(4, IntScheme.PER_CHANNEL, false, IntScheme.ScaleType.F32)}) {
            Random rnd = new Random(17);
            float[] w = new float[ROWS * COLS], x = new float[TOKENS * COLS];
            for (int i = 0; i < w.length; i++) w[i] = (float) (rnd.nextGaussian() * 0.05);
            float[] channel = new float[COLS];
            for (int c = 0; c < COLS; c++) channel[c] = c % 37 == 0 ? 20f : 0.3f + rnd.nextFloat(); // salient channels
            for (int t = 0; t < TOKENS; t++) for (int c = 0; c < COLS; c++) x[t * COLS + c] = (float) (rnd.nextGaussian() * channel[c]);
            float[] mean = new float[COLS];
            for (int t = 0; t < TOKENS; t++) for (int c = 0; c < COLS; c++) mean[c] += Math.abs(x[t * COLS + c]) / TOKENS;

            float[] wMean = duo ? ScaleSearch.weightMean(COLS, s.groupSize(COLS), w) : null;
            ScaleSearch.Result ours = ScaleSearch.search(mean, wMean, 20, sc -> outputMse(x, w, FakeQuant.scaled(w, ROWS, COLS, sc, s)));
            double[] ref = referenceSearch(x, w, s, duo);
            assertEquals(ref[0], ours.alpha(), 1e-12, s + ": alpha");
            assertTrue(ours.alpha() > 0, s + ": salient channels should be protected, alpha " + ours.alpha());
            double[] refScales = referenceScales(x, duo ? referenceWeightMean(w, s.groupSize(COLS)) : null, ref[0]);
            for (int c = 0; c < COLS; c++) assertEquals(refScales[c], ours.scales()[c], 1e-5 * refScales[c], s + ": scale " + c);
            assertEquals(ref[1], ours.loss(), 1e-4 * ref[1], s + ": loss");
            assertTrue(ours.loss() < ref[2], s + ": AWQ loss " + ours.loss() + " not below RTN's " + ref[2]);
        }
    }

    /** duo_scaling against its formula in float64; with uniform weight magnitudes it is the plain rule (the constant divides out). */
    @Test void duoScalesFollowAutoAwq() {
        float[] x = {0.5f, 2f, 9f, 0.01f}, w = {0.3f, 0.6f, 0.2f, 0.9f}, same = {0.4f, 0.4f, 0.4f, 0.4f};
        double alpha = 0.35;
        float[] ours = ScaleSearch.duoScales(x, w, alpha);
        double[] ref = new double[4];
        double max = 0, min = Double.MAX_VALUE;
        for (int c = 0; c < 4; c++) {
            ref[c] = Math.max(Math.pow(x[c], alpha) / (Math.pow(w[c], 1 - alpha) + 1e-4), 1e-4);
            max = Math.max(max, ref[c]);
            min = Math.min(min, ref[c]);
        }
        for (int c = 0; c < 4; c++) assertEquals(ref[c] / Math.sqrt(max * min), ours[c], 1e-5 * ours[c]);
        float[] plain = ScaleSearch.scales(x, alpha), uniform = ScaleSearch.duoScales(x, same, alpha);
        for (int c = 0; c < 4; c++) assertEquals(plain[c], uniform[c], 1e-5 * plain[c]);
    }

    private static double outputMse(float[] x, float[] w, float[] q) {
        double sum = 0;
        for (int t = 0; t < TOKENS; t++) {
            for (int r = 0; r < ROWS; r++) {
                double a = 0, b = 0;
                for (int c = 0; c < COLS; c++) {
                    a += (double) x[t * COLS + c] * w[r * COLS + c];
                    b += (double) x[t * COLS + c] * q[r * COLS + c];
                }
                sum += (a - b) * (a - b);
            }
        }
        return sum / ((double) TOKENS * ROWS);
    }

    // ---- float64 reference, written from AutoAWQ's quantizer.py ----

    /** {@code w_scale = |w| / (amax over the group + 1e-6)}, viewed [-1, group]; {@code w_mean = w_scale.mean(0)}. */
    private static double[] referenceWeightMean(float[] w, int gs) {
        double[] m = new double[COLS];
        for (int r = 0; r < ROWS; r++) {
            for (int g = 0; g < COLS; g += gs) {
                double amax = 0;
                for (int k = 0; k < gs; k++) amax = Math.max(amax, Math.abs((double) w[r * COLS + g + k]));
                for (int k = 0; k < gs; k++) m[g + k] += Math.abs((double) w[r * COLS + g + k]) / (amax + 1e-6) / ROWS;
            }
        }
        return m;
    }

    /** {@code x_mean.pow(ratio)} (over {@code w_mean.pow(1 - ratio) + 1e-4} with duo scaling), clamped to 1e-4, over sqrt(max · min). */
    private static double[] referenceScales(float[] x, double[] wMean, double alpha) {
        double[] mean = new double[COLS];
        for (int t = 0; t < TOKENS; t++) for (int c = 0; c < COLS; c++) mean[c] += Math.abs((double) x[t * COLS + c]);
        double max = 0, min = Double.MAX_VALUE;
        double[] s = new double[COLS];
        for (int c = 0; c < COLS; c++) {
            double v = Math.pow(mean[c] / TOKENS, alpha);
            if (wMean != null) v /= Math.pow(wMean[c], 1 - alpha) + 1e-4;
            s[c] = Math.max(v, 1e-4);
            max = Math.max(max, s[c]);
            min = Math.min(min, s[c]);
        }
        for (int c = 0; c < COLS; c++) s[c] /= Math.sqrt(max * min);
        return s;
    }

    /** {alpha, its loss, loss at alpha 0}. */
    private static double[] referenceSearch(float[] x, float[] w, IntScheme scheme, boolean duo) {
        double bestLoss = Double.POSITIVE_INFINITY, bestAlpha = -1, rtn = 0;
        double[] wMean = duo ? referenceWeightMean(w, scheme.groupSize(COLS)) : null;
        for (int i = 0; i < 20; i++) {
            double alpha = i / 20.0;
            double loss = referenceLoss(x, w, scheme, referenceScales(x, wMean, alpha));
            if (loss < bestLoss) {
                bestLoss = loss;
                bestAlpha = alpha;
            }
        }
        double[] ones = new double[COLS];
        java.util.Arrays.fill(ones, 1);
        rtn = referenceLoss(x, w, scheme, ones);
        return new double[] {bestAlpha, bestLoss, rtn};
    }

    /** The output MSE of {@code Q(W·diag(s))·diag(1/s)} ({@code pseudo_quantize_tensor}, zero point). */
    private static double referenceLoss(float[] x, float[] w, IntScheme scheme, double[] s) {
        double[] q = new double[w.length];
        int gs = scheme.groupSize(COLS);
        for (int r = 0; r < ROWS; r++) {
            for (int g = 0; g < COLS / gs; g++) {
                double lo = 0, hi = 0;
                for (int k = 0; k < gs; k++) {
                    double v = w[r * COLS + g * gs + k] * s[g * gs + k];
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
                int maxq = (1 << scheme.bits()) - 1;
                double scale = (hi - lo) / maxq;
                double zero = Math.min(maxq, Math.max(0, Math.rint(-lo / scale)));
                for (int k = 0; k < gs; k++) {
                    int c = g * gs + k;
                    double code = Math.min(maxq, Math.max(0, Math.rint(w[r * COLS + c] * s[c] / scale) + zero));
                    q[r * COLS + c] = scale * (code - zero) / s[c];
                }
            }
        }
        double sum = 0;
        for (int t = 0; t < TOKENS; t++) {
            for (int r = 0; r < ROWS; r++) {
                double a = 0, b = 0;
                for (int c = 0; c < COLS; c++) {
                    a += x[t * COLS + c] * (double) w[r * COLS + c];
                    b += x[t * COLS + c] * q[r * COLS + c];
                }
                sum += (a - b) * (a - b);
            }
        }
        return sum / ((double) TOKENS * ROWS);
    }
}
