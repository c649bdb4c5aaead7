package io.modelopt.quantization.awq;

/**
 * Folding AWQ's per-channel scales {@code s} into the model without changing what it computes:
 * the consumers' input columns are multiplied by {@code s} and the producer's output (a norm's
 * weight, or a preceding linear's rows) divided by it, so {@code (W·diag(s))·(x / s) = W·x}.
 * Weights are row-major {@code rows × cols} (output rows, input columns), modified in place.
 */
public final class ScaleFold {
    private ScaleFold() {}

    /** {@code w[r][c] *= s[c]}: a consumer of the scaled input. */
    public static void scaleColumns(float[] w, int rows, int cols, float[] s) {
        check(w, rows, cols, s.length, cols);
        for (int r = 0; r < rows; r++) for (int c = 0, o = r * cols; c < cols; c++) w[o + c] *= s[c];
    }

    /** {@code w[r][c] /= s[c]}: undoes {@link #scaleColumns} (a fake-quantized weight back in the original basis). */
    public static void unscaleColumns(float[] w, int rows, int cols, float[] s) {
        check(w, rows, cols, s.length, cols);
        for (int r = 0; r < rows; r++) for (int c = 0, o = r * cols; c < cols; c++) w[o + c] /= s[c];
    }

    /** {@code w[r][c] /= s[r]}: the linear producing the scaled input (v before o, up before down). */
    public static void unscaleRows(float[] w, int rows, int cols, float[] s) {
        check(w, rows, cols, s.length, rows);
        for (int r = 0; r < rows; r++) for (int c = 0, o = r * cols; c < cols; c++) w[o + c] /= s[r];
    }

    /** {@code w[r][c] *= s[r]}: undoes {@link #unscaleRows}. */
    public static void scaleRows(float[] w, int rows, int cols, float[] s) {
        check(w, rows, cols, s.length, rows);
        for (int r = 0; r < rows; r++) for (int c = 0, o = r * cols; c < cols; c++) w[o + c] *= s[r];
    }

    /** {@code norm[c] /= s[c]}: an RMS norm's weight producing the scaled input. */
    public static void unscaleNorm(float[] norm, float[] s) {
        if (norm.length != s.length) throw new IllegalArgumentException("norm of " + norm.length + " channels, scales of " + s.length);
        for (int c = 0; c < norm.length; c++) norm[c] /= s[c];
    }

    private static void check(float[] w, int rows, int cols, int scales, int want) {
        if ((long) rows * cols != w.length) throw new IllegalArgumentException(w.length + " weights, not " + rows + " x " + cols);
        if (scales != want) throw new IllegalArgumentException(scales + " scales for " + want + " channels");
    }
}
