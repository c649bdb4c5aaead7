package io.modelopt.quantization.rtn;

import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import java.lang.foreign.Arena;

/**
 * Round-to-nearest quantization of float weights into a group-wise integer scheme
 * ({@code w ≈ scale · (code − zero)}), group by group, no calibration data.
 *
 * <p><b>The rule</b> (AutoGPTQ's {@code Quantizer.find_params}, auto_gptq/quantization/quantizer.py):
 * the group's range is widened to hold 0, {@code xmin = min(min w, 0)}, {@code xmax = max(max w, 0)};
 * <ul>
 *   <li>symmetric: {@code scale = 2·max(−xmin, xmax) / maxq}, zero {@code (maxq + 1) / 2 = 2^(bits−1)}
 *       (maxq = {@code 2^bits − 1}). For INT8 this is {@code absmax / 127.5}, which is also
 *       compressed-tensors' {@code calculate_qparams} for symmetric INT ({@code max_val_pos / (bit_range / 2)},
 *       bit_range = 255, codes clamped to [−128, 127]): one rule serves both. (find_params leaves xmin at 0
 *       for a group with no negative weight, halving that group's scale; we take {@code 2·absmax/maxq}
 *       for every group, as compressed-tensors does. AutoAWQ's symmetric rule, {@code absmax / (2^(bits−1) − 1)},
 *       is a different one and is not followed.)</li>
 *   <li>asymmetric: {@code scale = (xmax − xmin) / maxq}, {@code zero = round(−xmin / scale)} clamped to
 *       {@code [0, maxq]} (the clamp as AutoAWQ's {@code pseudo_quantize_tensor}).</li>
 *   <li>codes: {@code clamp(round(w / scale) + zero, 0, maxq)}, round half to even as {@code torch.round}.</li>
 * </ul>
 * Deviations on purpose: the scale is rounded to the stored type (F16) <em>before</em> the zero point
 * and codes are computed with it, so what is stored decodes as the codes were chosen; a group of zeros
 * (or one whose scale rounds to 0 in F16) gets scale 0 and codes at the zero point, so it decodes to 0
 * (find_params substitutes the range [−1, 1]; compressed-tensors clamps the scale to float eps).
 * Arithmetic: the range and the raw scale in float (as torch's float32), the quotients {@code w / scale}
 * and {@code −xmin / scale} in double, whose quotient of two floats never lands on a false tie.
 *
 * <p><b>Clip search</b> (option): AutoGPTQ's {@code mse=True} grid, {@code grid = 100},
 * {@code maxshrink = 0.8}: for {@code i = 0 … 79} the range shrinks to {@code p·xmin, p·xmax} with
 * {@code p = 1 − i/100}, and each group keeps the candidate whose stored decode has the lowest squared
 * error against the weights (find_params' default norm is 2.4; the issue asks for the MSE, norm 2).
 * {@code i = 0} is plain RTN and only a strictly lower error replaces it, so the search never does worse.
 * (AutoAWQ's {@code _compute_best_clip} shrinks only to 0.55, over 10 steps, and measures the error of
 * the layer's outputs on calibration activations, which RTN does not have.)
 */
public final class RtnQuantizer {
    private RtnQuantizer() {}

    /** Clip search grid: {@code p = 1 − i / GRID}, AutoGPTQ's default {@code grid}. */
    static final int GRID = 100;
    /** Candidates {@code i < MAX_SHRINK · GRID}, AutoGPTQ's default {@code maxshrink}. */
    static final double MAX_SHRINK = 0.8;

    /**
     * Quantizes {@code w[off .. off + cols)} into {@code dst} (a row of {@code s} and {@code cols} weights).
     *
     * @throws IllegalArgumentException for a NaN or infinite weight (naming its column), a scale that
     *                                  overflows F16, or a {@code dst} of another shape
     */
    public static void quantizeRow(float[] w, int off, int cols, IntScheme s, boolean clipSearch, IntRow dst) {
        if (off < 0 || cols < 1 || off > w.length - cols) throw new IllegalArgumentException("row of " + cols + " at " + off + " outside an array of " + w.length);
        if (!s.fits(cols)) throw new IllegalArgumentException(s + ": a row of " + cols + " weights is not a whole number of groups");
        if (dst.codes.length != cols || dst.groupSize != s.groupSize(cols)) {
            throw new IllegalArgumentException("dst holds " + dst.codes.length + " weights in groups of " + dst.groupSize + ", not a " + s + " row of " + cols);
        }
        int gs = s.groupSize(cols);
        for (int g = 0; g < cols / gs; g++) quantizeGroup(w, off + g * gs, gs, s, clipSearch, dst, g, off);
    }

    /**
     * A whole {@code rows × cols} weight (row-major in {@code w}) quantized into new tensors named
     * {@code canonicalName} ({@link PackedIntTensors#allocate}), owned by {@code arena}.
     *
     * @throws IllegalArgumentException naming the tensor (and the row) for a shape the scheme cannot
     *                                  store or a weight {@link #quantizeRow} refuses
     */
    public static PackedIntTensors quantize(String canonicalName, float[] w, int rows, int cols, IntScheme s, boolean clipSearch, Arena arena) {
        if ((long) rows * cols != w.length) throw new IllegalArgumentException("tensor " + canonicalName + ": " + w.length + " weights, not " + rows + " x " + cols);
        PackedIntTensors t = PackedIntTensors.allocate(canonicalName, s, rows, cols, arena);
        IntRow row = new IntRow(s, cols);
        for (int r = 0; r < rows; r++) {
            try {
                quantizeRow(w, r * cols, cols, s, clipSearch, row);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("tensor " + canonicalName + " row " + r + ": " + e.getMessage(), e);
            }
            t.writeRow(r, row);
        }
        return t;
    }

    private static void quantizeGroup(float[] w, int o, int n, IntScheme s, boolean clipSearch, IntRow dst, int g, int rowOff) {
        for (int k = 0; k < n; k++) {
            float x = w[o + k];
            if (!Float.isFinite(x)) throw new IllegalArgumentException("weight " + x + " at column " + (o - rowOff + k) + " of the row at offset " + rowOff);
        }
        try {
            groupParams(w, o, n, s, clipSearch, dst, g);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("group " + g + " of the row at offset " + rowOff + ": " + e.getMessage(), e);
        }
        float scale = dst.scales[g];
        int zero = dst.zeros[g], maxq = s.maxCode(), c0 = o - rowOff;
        for (int k = 0; k < n; k++) dst.codes[c0 + k] = code(w[o + k], scale, zero, maxq);
    }

    /**
     * The scale and zero point of the (finite) weights {@code w[o .. o+n)} into group {@code g} of
     * {@code dst}, codes untouched: the range's RTN parameters, or with {@code clipSearch} the grid's
     * best (class comment). GPTQ calls this for each group as it reaches it ({@code find_params},
     * with {@code mse} when asked).
     *
     * @throws IllegalArgumentException if the range overflows the scheme's scale type
     */
    public static void groupParams(float[] w, int o, int n, IntScheme s, boolean clipSearch, IntRow dst, int g) {
        float lo = 0, hi = 0;
        for (int k = 0; k < n; k++) {
            lo = Math.min(lo, w[o + k]);
            hi = Math.max(hi, w[o + k]);
        }
        float scale = scale(s, lo, hi);
        if (Float.isInfinite(scale)) throw new IllegalArgumentException("range [" + lo + ", " + hi + "] overflows an " + s.scaleType() + " scale");
        int zero = zero(s, lo, scale);
        if (clipSearch && scale != 0) {
            double best = error(w, o, n, s, scale, zero);
            for (int i = 1; i < (int) (MAX_SHRINK * GRID); i++) {
                double p = 1 - (double) i / GRID;
                float lo1 = (float) (p * lo), hi1 = (float) (p * hi);
                float scale1 = scale(s, lo1, hi1);
                if (scale1 == 0) break; // smaller ranges round to 0 too
                int zero1 = zero(s, lo1, scale1);
                double err = error(w, o, n, s, scale1, zero1);
                if (err < best) {
                    best = err;
                    scale = scale1;
                    zero = zero1;
                }
            }
        }
        dst.scales[g] = scale;
        dst.zeros[g] = zero;
    }

    /** The stored scale of range {@code [lo, hi]} ({@code lo ≤ 0 ≤ hi}): float arithmetic, then F16 rounding for an F16 scheme. */
    public static float scale(IntScheme s, float lo, float hi) {
        int maxq = s.maxCode();
        float raw = s.symmetric() ? 2f * Math.max(-lo, hi) / maxq : (hi - lo) / maxq;
        return s.scaleType() == IntScheme.ScaleType.F16 ? Float.float16ToFloat(Float.floatToFloat16(raw)) : raw;
    }

    /** The zero point: symmetric or scale 0, the scheme's middle code; else {@code round(−lo / scale)} in {@code [0, maxq]}. */
    public static int zero(IntScheme s, float lo, float scale) {
        if (s.symmetric() || scale == 0) return s.symmetricZero();
        return (int) Math.clamp(Math.rint(-lo / (double) scale), 0, s.maxCode());
    }

    static int code(float x, float scale, int zero, int maxq) {
        if (scale == 0) return zero;
        return (int) Math.clamp(Math.rint(x / (double) scale) + zero, 0, maxq);
    }

    /** Squared error of the group decoded as stored ({@code scale · (code − zero)} in float) against the weights. */
    private static double error(float[] w, int o, int n, IntScheme s, float scale, int zero) {
        int maxq = s.maxCode();
        double e = 0;
        for (int k = 0; k < n; k++) {
            float x = w[o + k];
            double d = scale * (code(x, scale, zero, maxq) - zero) - (double) x;
            e += d * d;
        }
        return e;
    }
}
