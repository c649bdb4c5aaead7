package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.gptq.HessianAccumulator;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The o/down scaling groups' loss, computed from the input's Gram matrix, against AutoAWQ's
 * definition in float64: the mean over tokens and output rows of {@code (x_t·(q_r − w_r))²} for
 * the fake-quantized scaled candidate {@code q}.
 */
class AwqLossTest {
    @Test void gramLossEqualsTheTokensOutputMse() {
        int rows = 24, cols = 64, tokens = 300;
        Random rnd = new Random(11);
        float[] w = new float[rows * cols], x = new float[tokens * cols], sc = new float[cols];
        for (int i = 0; i < w.length; i++) w[i] = (float) (rnd.nextGaussian() * 0.05);
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * (i % cols == 3 ? 8 : 1)); // one outlier channel
        for (int c = 0; c < cols; c++) sc[c] = (float) Math.exp(rnd.nextGaussian() * 0.3);
        IntScheme s = new IntScheme(4, 32, false, IntScheme.ScaleType.F32);
        float[] q = FakeQuant.scaled(w, rows, cols, sc, s);
        double expected = 0;
        for (int t = 0; t < tokens; t++) {
            for (int r = 0; r < rows; r++) {
                double d = 0;
                for (int k = 0; k < cols; k++) d += (double) x[t * cols + k] * ((double) q[r * cols + k] - w[r * cols + k]);
                expected += d * d;
            }
        }
        expected /= (double) tokens * rows;
        try (ComputePool pool = new ComputePool(2)) {
            HessianAccumulator h = new HessianAccumulator(pool, cols);
            h.accept(java.util.Arrays.copyOf(x, 100 * cols), 100, cols); // in two batches, as the calibration feeds it
            h.accept(java.util.Arrays.copyOfRange(x, 100 * cols, x.length), tokens - 100, cols);
            double[] hd = h.hessian();
            float[] gram = new float[hd.length];
            for (int i = 0; i < hd.length; i++) gram[i] = (float) (hd[i] / 2);
            float[] delta = q.clone();
            for (int i = 0; i < delta.length; i++) delta[i] -= w[i];
            float[] into = new float[w.length];
            FakeQuant.scaled(w, rows, cols, sc, s, into, pool);
            assertEquals(java.util.Arrays.toString(q), java.util.Arrays.toString(into), "the buffered, parallel candidate is the same");
            double ours = AwqScaler.gramLoss(delta, rows, cols, gram, new float[cols * rows], pool);
            assertEquals(expected, ours, 1e-5 * expected);
        }
    }
}
