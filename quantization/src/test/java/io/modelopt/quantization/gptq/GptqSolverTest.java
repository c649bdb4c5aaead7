package io.modelopt.quantization.gptq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.rtn.RtnQuantizer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * GPTQ on a small random layer against a float64 transcription of the paper's algorithm
 * (Frantar et al. 2022, Algorithm 1 without the lazy batches or the Cholesky: the explicit
 * inverse Hessian, updated by Gaussian elimination of each quantized column).
 */
class GptqSolverTest {
    static final int ROWS = 40, COLS = 256, TOKENS = 600;

    /** Correlated inputs with uneven channel scales (a few "salient" channels), as activations are. */
    static double[] inputs(Random r) {
        double[] x = new double[TOKENS * COLS];
        double[] scale = new double[COLS];
        for (int c = 0; c < COLS; c++) scale[c] = c % 37 == 0 ? 8 : 0.5 + r.nextDouble();
        for (int t = 0; t < TOKENS; t++) {
            double common = r.nextGaussian();
            for (int c = 0; c < COLS; c++) x[t * COLS + c] = scale[c] * (r.nextGaussian() + 0.5 * common);
        }
        return x;
    }

    static double[] hessian(double[] x) {
        double[] h = new double[COLS * COLS];
        for (int t = 0; t < TOKENS; t++) {
            for (int a = 0; a < COLS; a++) {
                double xa = x[t * COLS + a];
                for (int b = 0; b < COLS; b++) h[a * COLS + b] += 2 * xa * x[t * COLS + b] / TOKENS;
            }
        }
        return h;
    }

    static float[] weights(Random r) {
        float[] w = new float[ROWS * COLS];
        for (int i = 0; i < w.length; i++) w[i] = (float) (r.nextGaussian() * 0.05);
        return w;
    }

    /** The paper's algorithm in float64; codes[r][c] in original column order. */
    static int[][] reference(float[] w, double[] h0, IntScheme s, double dampFrac, boolean actOrder, int blockSize) {
        return reference(w, h0, s, dampFrac, actOrder, blockSize, false);
    }

    /**
     * find_params of the reference quantizer over {@code x[off .. off+n)} into group g: the range with 0,
     * and with {@code mse} its grid (p = 1 − i/100, i < 80) keeping the lowest squared error of the decode.
     */
    static void findParams(double[] x, int off, int n, IntScheme s, boolean mse, float[] scale, int[] zero, int g) {
        float lo = 0, hi = 0;
        for (int k = 0; k < n; k++) { lo = Math.min(lo, (float) x[off + k]); hi = Math.max(hi, (float) x[off + k]); }
        scale[g] = RtnQuantizer.scale(s, lo, hi);
        zero[g] = RtnQuantizer.zero(s, lo, scale[g]);
        if (!mse || scale[g] == 0) return;
        double best = Double.POSITIVE_INFINITY;
        for (int i = 0; i < 80; i++) {
            double p = 1 - i / 100.0;
            float lo1 = (float) (p * lo), hi1 = (float) (p * hi), sc = RtnQuantizer.scale(s, lo1, hi1);
            if (sc == 0) break;
            int z = RtnQuantizer.zero(s, lo1, sc);
            double err = 0;
            for (int k = 0; k < n; k++) {
                float v = (float) x[off + k];
                double q = sc * (Math.clamp(Math.rint(v / (double) sc) + z, 0, s.maxCode()) - z);
                err += (q - v) * (q - v);
            }
            if (err < best) { best = err; scale[g] = sc; zero[g] = z; }
        }
    }

    static int[][] reference(float[] w, double[] h0, IntScheme s, double dampFrac, boolean actOrder, int blockSize, boolean mse) {
        int n = COLS;
        double[] h = h0.clone();
        boolean[] dead = new boolean[n];
        for (int c = 0; c < n; c++) if (h[c * n + c] == 0) { h[c * n + c] = 1; dead[c] = true; }
        Integer[] order = new Integer[n];
        for (int c = 0; c < n; c++) order[c] = c;
        if (actOrder) java.util.Arrays.sort(order, (a, b) -> Double.compare(h[b * n + b], h[a * n + a]));
        double mean = 0;
        for (int c = 0; c < n; c++) mean += h[c * n + c];
        mean /= n;
        double[][] a = new double[n][2 * n]; // permuted, dampened H | I  -> Gauss-Jordan
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) a[i][j] = h[order[i] * n + order[j]] + (i == j ? dampFrac * mean : 0);
            a[i][n + i] = 1;
        }
        for (int p = 0; p < n; p++) {
            double piv = a[p][p];
            for (int j = 0; j < 2 * n; j++) a[p][j] /= piv;
            for (int i = 0; i < n; i++) {
                if (i == p) continue;
                double f = a[i][p];
                for (int j = 0; j < 2 * n; j++) a[i][j] -= f * a[p][j];
            }
        }
        int gs = s.groupSize(n);
        int[][] codes = new int[ROWS][n];
        for (int r = 0; r < ROWS; r++) {
            double[][] hinv = new double[n][n];
            for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) hinv[i][j] = a[i][n + j];
            double[] x = new double[n], snapshot = new double[n], orig = new double[n];
            for (int c = 0; c < n; c++) x[c] = dead[order[c]] ? 0 : w[r * n + order[c]];
            for (int c = 0; c < n; c++) orig[order[c]] = x[c];
            float[] scale = new float[n / gs];
            int[] zero = new int[n / gs];
            boolean staticParams = gs == n || actOrder;
            if (gs == n) { // per channel: the weights as given
                double[] given = new double[n];
                for (int c = 0; c < n; c++) given[c] = w[r * n + c];
                findParams(given, 0, n, s, mse, scale, zero, 0);
            } else if (actOrder) { // static groups
                for (int g = 0; g < n / gs; g++) findParams(orig, g * gs, gs, s, mse, scale, zero, g);
            }
            for (int c = 0; c < n; c++) {
                if (c % blockSize == 0) System.arraycopy(x, 0, snapshot, 0, n); // the reference code's find_params reads W as of the batch start
                int g = order[c] / gs;
                if (!staticParams && c % gs == 0) findParams(snapshot, c, gs, s, mse, scale, zero, g);
                int code = scale[g] == 0 ? zero[g] : (int) Math.clamp(Math.rint(x[c] / scale[g]) + zero[g], 0, s.maxCode());
                codes[r][order[c]] = code;
                double q = (double) scale[g] * (code - zero[g]);
                double e = (x[c] - q) / hinv[c][c];
                for (int j = c + 1; j < n; j++) x[j] -= e * hinv[c][j];
                // eliminate column c from the inverse (the paper's Eq. 3 update)
                double d = hinv[c][c];
                for (int i = c + 1; i < n; i++) {
                    double f = hinv[i][c] / d;
                    for (int j = c + 1; j < n; j++) hinv[i][j] -= f * hinv[c][j];
                }
            }
        }
        return codes;
    }

    static int[][] ours(float[] w, double[] h, IntScheme s, GptqConfig cfg, ComputePool pool) {
        int[][] codes = new int[ROWS][];
        GptqSolver.quantize("test.weight", w, ROWS, COLS, h.clone(), s, cfg, pool, (r, row) -> codes[r] = row.codes.clone());
        return codes;
    }

    @ParameterizedTest(name = "INT{0} g{1} sym {2} act-order {3}")
    @CsvSource({"4,128,false,false", "4,32,false,false", "3,128,false,false", "4,-1,false,false", "4,128,false,true", "4,128,true,false", "2,64,false,true"})
    void sameIntegersAsTheFloat64PaperAlgorithm(int bits, int group, boolean sym, boolean actOrder) {
        Random r = new Random(17 + bits * 31 + group);
        double[] h = hessian(inputs(r));
        float[] w = weights(r);
        IntScheme s = IntScheme.of(bits, group, sym);
        GptqConfig cfg = GptqConfig.builder().actOrder(actOrder).build();
        int[][] ref = reference(w, h, s, cfg.damp(), actOrder, cfg.blockSize());
        int differ = 0;
        try (ComputePool pool = new ComputePool(2)) {
            int[][] got = ours(w, h, s, cfg, pool);
            for (int i = 0; i < ROWS; i++) for (int c = 0; c < COLS; c++) if (got[i][c] != ref[i][c]) differ++;
            assertArrayEquals(got, ours(w, h, s, cfg, null), "threads change nothing");
        }
        System.out.printf("GPTQ INT%d g%d sym %s act-order %s: %d of %d integers differ from the float64 reference%n", bits, group, sym, actOrder, differ, ROWS * COLS);
        assertTrue(differ <= ROWS * COLS / 1000, differ + " of " + ROWS * COLS + " integers differ from the float64 reference");
        // and GPTQ is not RTN: it changes some codes and lowers the output error on these inputs
        int[][] rtn = new int[ROWS][];
        for (int i = 0; i < ROWS; i++) {
            IntRow row = new IntRow(s, COLS);
            RtnQuantizer.quantizeRow(w, i * COLS, COLS, s, false, row);
            rtn[i] = row.codes;
        }
        int changed = 0;
        for (int i = 0; i < ROWS; i++) for (int c = 0; c < COLS; c++) if (rtn[i][c] != ref[i][c]) changed++;
        assertTrue(changed > ROWS * COLS / 50, "GPTQ changed only " + changed + " codes");
    }

    /** Output error {@code Σ_r Δw_r H Δw_rᵀ} of decoded codes against the weights. */
    static double outputError(float[] w, double[] h, IntScheme s, GptqConfig cfg) {
        double[] dq = new double[ROWS * COLS];
        GptqSolver.quantize("test.weight", w, ROWS, COLS, h.clone(), s, cfg, null, (r, row) -> {
            for (int c = 0; c < COLS; c++) {
                int g = c / row.groupSize;
                dq[r * COLS + c] = (double) row.scales[g] * (row.codes[c] - row.zeros[g]) - w[r * COLS + c];
            }
        });
        double e = 0;
        for (int r = 0; r < ROWS; r++) {
            for (int a = 0; a < COLS; a++) {
                double da = dq[r * COLS + a];
                if (da == 0) continue;
                for (int b = 0; b < COLS; b++) e += da * h[a * COLS + b] * dq[r * COLS + b];
            }
        }
        return e;
    }

    @ParameterizedTest(name = "INT{0} g{1} act-order {2}")
    @CsvSource({"3,128,false", "4,-1,false", "3,64,true", "2,32,false"})
    void clipSearchTakesEachGroupsParametersAsFindParamsWithMse(int bits, int group, boolean actOrder) {
        Random r = new Random(5 + bits * 7 + group);
        double[] h = hessian(inputs(r));
        float[] w = weights(r);
        IntScheme s = IntScheme.of(bits, group, false);
        GptqConfig cfg = GptqConfig.builder().actOrder(actOrder).clipSearch(true).build();
        int[][] ref = reference(w, h, s, cfg.damp(), actOrder, cfg.blockSize(), true);
        int[][] got = ours(w, h, s, cfg, null);
        int differ = 0;
        for (int i = 0; i < ROWS; i++) for (int c = 0; c < COLS; c++) if (got[i][c] != ref[i][c]) differ++;
        assertTrue(differ <= ROWS * COLS / 1000, differ + " of " + ROWS * COLS + " integers differ from the float64 reference with mse");
        int[][] plain = ours(w, h, s, GptqConfig.builder().actOrder(actOrder).build(), null);
        int changed = 0;
        for (int i = 0; i < ROWS; i++) for (int c = 0; c < COLS; c++) if (got[i][c] != plain[i][c]) changed++;
        assertTrue(changed > 0, "the search changed no code");
        double withSearch = outputError(w, h, s, cfg), without = outputError(w, h, s, GptqConfig.builder().actOrder(actOrder).build());
        System.out.printf("GPTQ INT%d g%d act-order %s: output error %.6g with clip search, %.6g without%n", bits, group, actOrder, withSearch, without);
        assertTrue(withSearch < without, "clip search raised the output error: " + withSearch + " against " + without);
    }

    @Test
    void aHessianThatStaysIndefiniteFailsNamingTheLayer() {
        double[] h = new double[COLS * COLS];
        for (int c = 0; c < COLS; c++) h[c * COLS + c] = c == 5 ? -50 : 1; // one negative eigenvalue; mean diag still positive
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GptqSolver.quantize("blk.3.ffn_down.weight", weights(new Random(1)), ROWS, COLS, h, IntScheme.of(4, 128, false), GptqConfig.DEFAULT, null, (r, row) -> {}));
        assertTrue(e.getMessage().contains("blk.3.ffn_down.weight") && e.getMessage().contains("not positive definite"), e.getMessage());
    }

    @Test
    void dampIsRaisedUntilTheCholeskySucceeds() {
        double[] h = new double[COLS * COLS];
        for (int c = 0; c < COLS; c++) h[c * COLS + c] = c == 5 ? -0.02 : 1; // positive definite once damp · mean > 0.02: the fifth increment
        GptqSolver.Stats st = GptqSolver.quantize("blk.0.attn_q.weight", weights(new Random(2)), ROWS, COLS, h, IntScheme.of(4, 128, false),
                GptqConfig.DEFAULT, null, (r, row) -> {});
        assertTrue(st.damp() > GptqConfig.DEFAULT.damp(), "damp " + st.damp());
    }

    @Test
    void nonPositiveDampAndActOrderWithoutStaticGroupsAreRejected() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GptqConfig.builder().damp(0).build()).getMessage().contains("damp must be positive"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GptqConfig.builder().damp(-0.01).build()).getMessage().contains("-0.01"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> GptqConfig.builder().actOrder(true).staticGroups(false).build())
                .getMessage().contains("g_idx"));
    }

    @Test
    void hessianGemmEqualsTheDirectSum() {
        Random r = new Random(3);
        int cols = 48, n = 40;
        float[] x = new float[n * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        try (ComputePool pool = new ComputePool(2)) {
            HessianAccumulator acc = new HessianAccumulator(pool, cols);
            acc.accept(x, 25, cols);
            acc.accept(java.util.Arrays.copyOfRange(x, 25 * cols, n * cols), 15, cols);
            double[] h = acc.hessian();
            for (int a = 0; a < cols; a++) {
                for (int b = 0; b < cols; b++) {
                    double e = 0;
                    for (int t = 0; t < n; t++) e += (double) x[t * cols + a] * x[t * cols + b];
                    assertEquals(2 * e / n, h[a * cols + b], 1e-4, a + "," + b);
                }
            }
        }
    }
}
