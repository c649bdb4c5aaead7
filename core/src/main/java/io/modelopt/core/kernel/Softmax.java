package io.modelopt.core.kernel;

/**
 * Numerically stable softmax in float, in place: subtract the maximum, exponentiate, divide by
 * the sum. A NaN anywhere in the input makes the whole output NaN (the maximum is NaN), so a bad
 * activation is never silently turned into a plausible distribution. Entries of
 * {@code -Infinity} (masked positions) become 0.
 */
public final class Softmax {
    private Softmax() {}

    public static void apply(float[] x, int off, int n) {
        apply(KernelMode.DEFAULT, x, off, n);
    }

    public static void apply(KernelMode mode, float[] x, int off, int n) {
        if (n <= 0) return;
        float max;
        if (mode == KernelMode.VECTOR) {
            max = ElementwiseVector.max(x, off, n);
        } else {
            max = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) max = Math.max(max, x[off + i]);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float e = (float) Math.exp(x[off + i] - max);
            x[off + i] = e;
            sum += e;
        }
        float inv = (float) (1.0 / sum);
        if (mode == KernelMode.VECTOR) {
            ElementwiseVector.scale(x, off, n, inv);
            return;
        }
        for (int i = 0; i < n; i++) x[off + i] *= inv;
    }
}
