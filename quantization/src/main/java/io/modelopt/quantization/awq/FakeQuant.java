package io.modelopt.quantization.awq;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.rtn.RtnQuantizer;

/**
 * Weights quantized with plain RTN ({@link RtnQuantizer}, no clip search) and decoded back to
 * floats, as stored: what AWQ's searches measure (AutoAWQ's {@code pseudo_quantize_tensor}).
 */
public final class FakeQuant {
    private FakeQuant() {}

    /** {@code rows × cols} row-major weights, quantized with {@code s} and decoded, into a new array. */
    public static float[] matrix(float[] w, int rows, int cols, IntScheme s) {
        float[] out = new float[w.length];
        IntRow row = new IntRow(s, cols);
        for (int r = 0; r < rows; r++) {
            RtnQuantizer.quantizeRow(w, r * cols, cols, s, false, row);
            for (int k = 0; k < cols; k++) out[r * cols + k] = row.value(k);
        }
        return out;
    }

    /**
     * AWQ's candidate for scales {@code sc}: {@code Q(W·diag(sc))·diag(1/sc)}, the quantized
     * folded weight expressed in the original input basis (so the model's own norm can stay).
     */
    public static float[] scaled(float[] w, int rows, int cols, float[] sc, IntScheme s) {
        float[] out = new float[w.length];
        scaled(w, rows, cols, sc, s, out, null);
        return out;
    }

    /**
     * {@link #scaled(float[], int, int, float[], IntScheme)} into {@code out}, rows in parallel on
     * {@code pool} (null: this thread); each row is scaled, quantized and unscaled on its own, so
     * the search's candidates allocate nothing the size of the matrix.
     */
    public static void scaled(float[] w, int rows, int cols, float[] sc, IntScheme s, float[] out, ComputePool pool) {
        if (w.length != (long) rows * cols || out.length < w.length || sc.length != cols) {
            throw new IllegalArgumentException(rows + " x " + cols + " weights in " + w.length + " floats, output " + out.length + ", scales " + sc.length);
        }
        ComputePool.RangeTask task = (start, end, worker) -> {
            float[] x = new float[cols];
            IntRow row = new IntRow(s, cols);
            for (int r = start; r < end; r++) {
                int o = r * cols;
                for (int c = 0; c < cols; c++) x[c] = w[o + c] * sc[c];
                RtnQuantizer.quantizeRow(x, 0, cols, s, false, row);
                for (int c = 0; c < cols; c++) out[o + c] = row.value(c) / sc[c];
            }
        };
        if (pool == null || pool.threads() == 1) task.run(0, rows, 0);
        else pool.parallelFor(rows, task);
    }

    /**
     * One group {@code w[off .. off + n)} quantized as {@link RtnQuantizer} stores it and decoded
     * into {@code out[0 .. n)}.
     */
    public static void group(float[] w, int off, int n, IntScheme s, float[] out) {
        float lo = 0, hi = 0;
        for (int k = 0; k < n; k++) {
            lo = Math.min(lo, w[off + k]);
            hi = Math.max(hi, w[off + k]);
        }
        float scale = RtnQuantizer.scale(s, lo, hi);
        int zero = RtnQuantizer.zero(s, lo, scale), maxq = s.maxCode();
        for (int k = 0; k < n; k++) {
            int code = scale == 0 ? zero : (int) Math.clamp(Math.rint(w[off + k] / (double) scale) + zero, 0, maxq);
            out[k] = scale * (code - zero);
        }
    }
}
