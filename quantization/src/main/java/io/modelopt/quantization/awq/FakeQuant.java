package io.modelopt.quantization.awq;

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
        float[] x = w.clone();
        ScaleFold.scaleColumns(x, rows, cols, sc);
        float[] q = matrix(x, rows, cols, s);
        ScaleFold.unscaleColumns(q, rows, cols, sc);
        return q;
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
