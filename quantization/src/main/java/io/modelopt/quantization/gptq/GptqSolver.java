package io.modelopt.quantization.gptq;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.rtn.RtnQuantizer;
import java.util.Locale;
import java.util.concurrent.atomic.DoubleAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GPTQ for one linear, as AutoGPTQ's and GPTQModel's {@code fasterquant}: dead inputs (zero
 * Hessian diagonal) get diagonal 1 and weight 0; optional act-order (columns by descending
 * diagonal) with static groups; dampening {@code damp · mean(diag H)}, raised by the increment
 * while the Cholesky fails; {@code U = chol(H⁻¹)ᵀ} (upper); then lazy batches of
 * {@code blockSize} columns: each column is quantized, its error {@code (w − q) / U[c][c]} is
 * spread over the rest of the batch at once and over the columns after the batch by one
 * matrix product at the batch's end.
 *
 * <p>Group parameters follow the reference code exactly: per-channel from the weights before
 * anything; static groups from the weights before any column is quantized; otherwise, at the
 * first column of each group, from the group's weights as they stood at the start of the
 * current lazy batch ({@code find_params(W[:, c:c+g])} reads {@code W}, to which the updates
 * inside a batch are written back only at its end). Scales are rounded to the stored type
 * (F16) before codes are computed, so the error spread is that of the weights the model will
 * use. With {@link GptqConfig#clipSearch()} each group's range is searched as {@code find_params}
 * with {@code mse} does, on the weights it would take the min/max of. All arithmetic is double.
 *
 * <p>Rows are independent given {@code H}: they are processed in tiles of {@link #TILE} rows
 * (which share each read of {@code U}) on the pool's threads.
 */
public final class GptqSolver {
    private static final Logger LOG = LoggerFactory.getLogger(GptqSolver.class);
    static final int TILE = 8;

    private GptqSolver() {}

    /** What one linear's GPTQ did: the damp it needed and GPTQ's loss {@code Σ (w − q)² / U[c][c]²}. */
    public record Stats(double damp, double loss) {}

    /** Receives the quantized rows (called from worker threads, once per row). */
    @FunctionalInterface
    public interface RowSink {
        void row(int r, IntRow row);
    }

    /**
     * Quantizes {@code w} ({@code rows × cols}, row-major) against the Hessian {@code h}
     * ({@code cols × cols}; modified: dead columns, permutation) and hands each row to {@code sink}.
     *
     * @throws IllegalArgumentException naming {@code name}: the Hessian stays not positive definite
     *         up to the config's max damp, a non-finite weight, a shape the scheme cannot hold
     */
    public static Stats quantize(String name, float[] w, int rows, int cols, double[] h, IntScheme s, GptqConfig cfg, ComputePool pool, RowSink sink) {
        if ((long) rows * cols != w.length) throw new IllegalArgumentException(name + ": " + w.length + " weights, not " + rows + " x " + cols);
        if (h.length != (long) cols * cols) throw new IllegalArgumentException(name + ": Hessian of " + h.length + " entries for " + cols + " input columns");
        if (!s.fits(cols)) throw new IllegalArgumentException(name + ": " + s + " cannot hold rows of " + cols + " weights (not a whole number of groups)");
        for (int i = 0; i < w.length; i++) {
            if (!Float.isFinite(w[i])) throw new IllegalArgumentException(name + ": weight " + w[i] + " at row " + i / cols + " column " + i % cols);
        }
        boolean[] dead = new boolean[cols];
        for (int c = 0; c < cols; c++) {
            if (h[c * cols + c] == 0) {
                h[c * cols + c] = 1;
                dead[c] = true;
            }
        }
        int[] perm = new int[cols];
        for (int c = 0; c < cols; c++) perm[c] = c;
        if (cfg.actOrder()) {
            Integer[] idx = new Integer[cols];
            for (int c = 0; c < cols; c++) idx[c] = c;
            java.util.Arrays.sort(idx, (a, b) -> Double.compare(h[b * cols + b], h[a * cols + a])); // stable: ties keep column order
            for (int c = 0; c < cols; c++) perm[c] = idx[c];
        }
        double[] hp = new double[cols * cols];
        double mean = 0;
        for (int i = 0; i < cols; i++) {
            int pi = perm[i];
            for (int j = 0; j < cols; j++) hp[i * cols + j] = h[pi * cols + perm[j]];
            mean += hp[i * cols + i];
        }
        mean /= cols;
        double damp = cfg.damp();
        double[] u;
        while (true) {
            double add = damp * mean;
            for (int i = 0; i < cols; i++) hp[i * cols + i] += add;
            u = CholeskyInverse.upperOfInverse(hp, cols, pool);
            for (int i = 0; i < cols; i++) hp[i * cols + i] -= add;
            if (u != null) break;
            double next = damp + cfg.dampIncrement();
            if (next >= cfg.maxDamp()) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "GPTQ %s: the Hessian is not positive definite even with damp %.4g"
                        + " (max %.4g): the calibration data may not exercise this layer's inputs (%d of %d columns dead)", name, damp, cfg.maxDamp(),
                        count(dead), cols));
            }
            LOG.warn("GPTQ {}: Hessian not positive definite with damp {}; retrying with {}", name, damp, next);
            damp = next;
        }
        final double[] hinv = u;
        int tiles = (rows + TILE - 1) / TILE;
        DoubleAdder loss = new DoubleAdder();
        ComputePool.RangeTask task = (t0, t1, worker) -> {
            TileWork work = new TileWork(cols, s, cfg, perm, dead, hinv);
            for (int t = t0; t < t1; t++) {
                int r0 = t * TILE, r1 = Math.min(rows, r0 + TILE);
                loss.add(work.run(w, r0, r1, sink));
            }
        };
        if (pool == null) task.run(0, tiles, 0);
        else pool.parallelForDynamic(tiles, 1, task);
        return new Stats(damp, loss.sum());
    }

    private static int count(boolean[] b) {
        int n = 0;
        for (boolean x : b) if (x) n++;
        return n;
    }

    /** One worker's scratch and the column sweep over a tile of rows. */
    private static final class TileWork {
        final int cols;
        final IntScheme s;
        final GptqConfig cfg;
        final int[] perm;
        final boolean[] dead;
        final double[] u;
        final int gs, maxq;
        final double[][] w = new double[TILE][], start = new double[TILE][], err = new double[TILE][];
        final IntRow[] out = new IntRow[TILE];
        final float[] group; // one group's weights as floats, for find_params

        TileWork(int cols, IntScheme s, GptqConfig cfg, int[] perm, boolean[] dead, double[] u) {
            this.cols = cols;
            this.s = s;
            this.cfg = cfg;
            this.perm = perm;
            this.dead = dead;
            this.u = u;
            this.gs = s.groupSize(cols);
            this.maxq = s.maxCode();
            for (int t = 0; t < TILE; t++) {
                w[t] = new double[cols];
                start[t] = new double[cols];
                err[t] = new double[cfg.blockSize()];
                out[t] = new IntRow(s, cols);
            }
            group = new float[gs];
        }

        double run(float[] weights, int r0, int r1, RowSink sink) {
            int n = r1 - r0, bs = cfg.blockSize();
            boolean perChannel = gs == cols;
            double loss = 0;
            for (int t = 0; t < n; t++) {
                int o = (r0 + t) * cols;
                IntRow row = out[t];
                // per-channel: find_params(W) on the weights as given, before dead columns are zeroed
                if (perChannel) params(weights, o, cols, row, 0);
                double[] x = w[t];
                for (int c = 0; c < cols; c++) x[c] = dead[perm[c]] ? 0 : weights[o + perm[c]];
                if (!perChannel && cfg.staticGroups()) {
                    double[] orig = start[t];
                    for (int c = 0; c < cols; c++) orig[perm[c]] = x[c]; // original column order, dead zeroed
                    for (int g = 0; g < cols / gs; g++) params(orig, g * gs, gs, row, g);
                }
            }
            for (int i1 = 0; i1 < cols; i1 += bs) {
                int i2 = Math.min(cols, i1 + bs);
                for (int t = 0; t < n; t++) {
                    double[] x = w[t], e = err[t], st = start[t];
                    IntRow row = out[t];
                    if (!perChannel && !cfg.staticGroups()) System.arraycopy(x, i1, st, i1, cols - i1);
                    for (int c = i1; c < i2; c++) {
                        int orig = perm[c];
                        int g = orig / gs;
                        if (!perChannel && !cfg.staticGroups() && c % gs == 0) params(st, c, gs, row, g);
                        float scale = row.scales[g];
                        int zero = row.zeros[g];
                        double v = x[c];
                        int code = scale == 0 ? zero : (int) Math.clamp(Math.rint(v / scale) + zero, 0, maxq);
                        row.codes[orig] = code;
                        double q = (double) scale * (code - zero);
                        double d = u[c * cols + c];
                        double e1 = (v - q) / d;
                        loss += (v - q) * (v - q) / (d * d);
                        int uc = c * cols;
                        for (int j = c + 1; j < i2; j++) x[j] -= e1 * u[uc + j];
                        e[c - i1] = e1;
                    }
                }
                if (i2 == cols) continue;
                // lazy batch update: W[:, i2:] -= Err1 · U[i1:i2, i2:], each U row read once per tile
                for (int k = i1; k < i2; k++) {
                    int uk = k * cols;
                    for (int t = 0; t < n; t++) {
                        double f = err[t][k - i1];
                        if (f == 0) continue;
                        double[] x = w[t];
                        for (int j = i2; j < cols; j++) x[j] -= f * u[uk + j];
                    }
                }
            }
            for (int t = 0; t < n; t++) sink.row(r0 + t, out[t]);
            return loss;
        }

        /** find_params over {@code x[o .. o+n)} into group {@code g} of {@code row}: RTN's rule (GPTQ's min/max with 0, F16-rounded scale), with mse if configured. */
        private void params(double[] x, int o, int n, IntRow row, int g) {
            for (int k = 0; k < n; k++) group[k] = (float) x[o + k];
            RtnQuantizer.groupParams(group, 0, n, s, cfg.clipSearch(), row, g);
        }

        private void params(float[] x, int o, int n, IntRow row, int g) {
            RtnQuantizer.groupParams(x, o, n, s, cfg.clipSearch(), row, g);
        }
    }
}
