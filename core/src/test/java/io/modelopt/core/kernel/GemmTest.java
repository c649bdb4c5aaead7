package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.quant.TestBlocks;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Gemm} on its own (the reference row decoder feeds the panels, so no vector decoder of a
 * weight format is involved), at whatever width this JVM runs: token counts that end on every
 * kind of tile (whole tiles of two vectors, and a last tile of one vector, at 512, 256 and 128 bits),
 * rows that end in a partial 8-row block and in a partial chunk. Every output of a whole 8-row
 * block must be exactly the FMA chain over the columns in order (the same bits at every width);
 * the last rows go through the format's dot product and are held to the float64 reference.
 */
class GemmTest {
    private static final int[] TOKENS = {1, 3, 4, 8, 12, 16, 17, 20, 24, 25, 31, 32, 33, 36, 40, 47, 48, 49, 64, 72, 100};

    private static void assumeVector() {
        assumeTrue(KernelMode.DEFAULT == KernelMode.VECTOR, "vector kernels not in use on this CPU/JVM");
    }

    @Test
    void tileShapeFollowsTheWidth() {
        assumeVector();
        assertEquals(Simd.L, Gemm.TOKEN_GRAIN);
        assertEquals(0, Gemm.TILE % Gemm.TOKEN_GRAIN);
        assertEquals(2 * Simd.L, Gemm.TILE);
    }

    @Test
    void f32OutputsAreTheFmaChainAtEveryTileShape() {
        assumeVector();
        long seed = 11;
        for (int[] shape : new int[][]{{8, 1}, {13, 7}, {40, 33}, {77, 100}}) {
            int rows = shape[0], cols = shape[1];
            WeightMatrix w = WeightMatrix.of(new TensorData("w", GgmlType.F32, new long[]{cols, rows}, TestBlocks.random(GgmlType.F32, rows, cols, seed++)));
            float[][] wr = decoded(w);
            for (int n : TOKENS) {
                float[] x = activations(n * cols, seed++);
                float[] out = run(F32Kernel.Scalar.INSTANCE, w, x, n, Activations.Kind.F32);
                check(w, wr, x, null, n, out, "F32 " + rows + "x" + cols + " tokens " + n);
            }
        }
    }

    @Test
    void q8_0OutputsAreTheFmaChainOverQuantizedActivations() {
        assumeVector();
        long seed = 99;
        for (int[] shape : new int[][]{{8, 32}, {19, 96}, {45, 160}}) {
            int rows = shape[0], cols = shape[1];
            WeightMatrix w = WeightMatrix.of(new TensorData("w", GgmlType.Q8_0, new long[]{cols, rows}, TestBlocks.random(GgmlType.Q8_0, rows, cols, seed++)));
            float[][] wr = decoded(w);
            for (int n : TOKENS) {
                float[] x = activations(n * cols, seed++);
                // the activations as the GEMM sees them: the scalar quantizer's quants times their scale
                float[] xq = new float[n * cols], q = new float[cols], d = new float[cols / 32];
                for (int t = 0; t < n; t++) {
                    Q8_0.quantizeActivations(x, t * cols, cols, q, 0, d, 0);
                    for (int k = 0; k < cols; k++) xq[t * cols + k] = q[k] * d[k / 32];
                }
                float[] out = run(Q8_0Kernel.Scalar.INSTANCE, w, x, n, Activations.Kind.Q8_0);
                check(w, wr, x, xq, n, out, "Q8_0 " + rows + "x" + cols + " tokens " + n);
            }
        }
    }

    @Test
    void nanStaysInItsToken() {
        assumeVector();
        int rows = 16, cols = 40;
        WeightMatrix w = WeightMatrix.of(new TensorData("w", GgmlType.F32, new long[]{cols, rows}, TestBlocks.random(GgmlType.F32, rows, cols, 5)));
        for (int n : new int[]{17, 25, 40}) {
            float[] x = activations(n * cols, n);
            x[(n - 2) * cols + 3] = Float.NaN;
            float[] out = run(F32Kernel.Scalar.INSTANCE, w, x, n, Activations.Kind.F32);
            for (int t = 0; t < n; t++) {
                for (int r = 0; r < rows; r++) {
                    float v = out[t * rows + r];
                    assertTrue(t == n - 2 ? Float.isNaN(v) : Float.isFinite(v), "tokens " + n + " token " + t + " row " + r + ": " + v);
                }
            }
        }
    }

    /** Gemm.compute over all rows, as MatMul's GEMM path calls it (one worker). */
    private static float[] run(FormatKernel kernel, WeightMatrix w, float[] x, int n, Activations.Kind kind) {
        int rows = w.rows(), cols = w.cols();
        Activations a = new Activations();
        a.prepare(kind, x, 0, cols, n, cols, true, false, false); // the scalar quantizer: only the GEMM is under test
        a.quantize(0, n);
        float[] out = new float[n * rows];
        java.util.Arrays.fill(out, Float.NaN);
        Gemm.compute(kernel, w, a, 0, rows, out, 0, rows, Gemm.panel(null, cols));
        return out;
    }

    private static void check(WeightMatrix w, float[][] wr, float[] x, float[] xq, int n, float[] out, String what) {
        int rows = w.rows(), cols = w.cols(), blockRows = rows / Gemm.ROWS * Gemm.ROWS;
        float[] xs = xq != null ? xq : x;
        for (int t = 0; t < n; t++) {
            for (int r = 0; r < rows; r++) {
                float got = out[t * rows + r];
                if (r < blockRows) {
                    float chain = 0;
                    for (int k = 0; k < cols; k++) chain = Math.fma(wr[r][k], xs[t * cols + k], chain);
                    assertEquals(Float.floatToRawIntBits(chain), Float.floatToRawIntBits(got), what + " token " + t + " row " + r + ": " + chain + " vs " + got);
                } else {
                    double ref = 0, mag = 0;
                    for (int k = 0; k < cols; k++) {
                        ref += (double) wr[r][k] * xs[t * cols + k];
                        mag += Math.abs((double) wr[r][k] * xs[t * cols + k]);
                    }
                    assertEquals(ref, got, 2e-6 * mag + 1e-30, what + " token " + t + " row " + r + " (dot-product tail)");
                }
            }
        }
    }

    private static float[][] decoded(WeightMatrix w) {
        float[][] wr = new float[w.rows()][w.cols()];
        for (int r = 0; r < w.rows(); r++) w.dequantizeRow(r, wr[r], 0);
        return wr;
    }

    private static float[] activations(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * (1 + (i / 40) % 3));
        return x;
    }
}
