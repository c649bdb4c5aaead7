package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntScheme;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * AutoAWQ's clip search against a float64 transcription of {@code _compute_best_clip}: with more
 * sampled tokens than a group has columns (the Gram-matrix path) and with fewer (tokens summed directly).
 */
class ClipSearchTest {
    @ParameterizedTest(name = "{0} tokens") @ValueSource(ints = {64, 20})
    void chosenMaximaMatchFloat64Reference(int tokens) {
        int rows = 16, cols = 128;
        IntScheme s = new IntScheme(3, 32, false, IntScheme.ScaleType.F32);
        Random rnd = new Random(5);
        float[] w = new float[rows * cols], x = new float[tokens * cols];
        for (int i = 0; i < w.length; i++) w[i] = (float) (rnd.nextGaussian() * (i % 29 == 0 ? 0.3 : 0.05)); // outliers worth clipping
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian();
        float[] orig = w.clone();
        float[] ours;
        try (ComputePool pool = new ComputePool(2)) {
            ours = ClipSearch.apply(w, rows, cols, ClipSearch.Inputs.of(x, tokens, cols, 32, pool), s, 20, 0.5, pool);
        }
        int gs = 32, shrunk = 0;
        for (int r = 0; r < rows; r++) {
            for (int g = 0; g < cols / gs; g++) {
                double max = 0;
                for (int k = 0; k < gs; k++) max = Math.max(max, Math.abs(orig[r * cols + g * gs + k]));
                double best = Double.POSITIVE_INFINITY, bestMax = max;
                for (int i = 0; i < 10; i++) {
                    // the bound and the scale in float, as the stored format defines them: with both ends
                    // clipped the zero point is round(3.5), a tie that double arithmetic would break otherwise
                    float m = (float) (max * (1 - i / 20.0));
                    double[] q = new double[gs];
                    double lo = 0, hi = 0;
                    for (int k = 0; k < gs; k++) {
                        q[k] = Math.min(m, Math.max(-m, orig[r * cols + g * gs + k]));
                        lo = Math.min(lo, q[k]);
                        hi = Math.max(hi, q[k]);
                    }
                    double scale = (float) ((float) hi - (float) lo) / 7f, zero = Math.min(7, Math.max(0, Math.rint(-lo / scale)));
                    for (int k = 0; k < gs; k++) q[k] = scale * (Math.min(7, Math.max(0, Math.rint(q[k] / scale) + zero)) - zero);
                    double err = 0;
                    for (int t = 0; t < tokens; t++) {
                        double d = 0;
                        for (int k = 0; k < gs; k++) d += x[t * cols + g * gs + k] * (q[k] - orig[r * cols + g * gs + k]);
                        err += d * d;
                    }
                    if (err / tokens < best) {
                        best = err / tokens;
                        bestMax = m;
                    }
                }
                assertEquals(bestMax, ours[r * (cols / gs) + g], 1e-6 * max, "row " + r + " group " + g);
                if (bestMax < max) shrunk++;
                for (int k = 0; k < gs; k++) assertTrue(Math.abs(w[r * cols + g * gs + k]) <= ours[r * (cols / gs) + g]);
            }
        }
        assertTrue(shrunk > 0, "no group was clipped");
    }
}
