package io.modelopt.quantization.awq;

import io.modelopt.quantization.calib.InputStatistics;
import java.util.Arrays;

/**
 * What AWQ keeps of one linear input: the mean |x| per channel over every calibration token (the
 * scale search's {@code x̄}) and an evenly spaced sample of token rows for the clip search.
 *
 * <p>The sample keeps every {@code stride}-th token; when it reaches {@code 2·sampleTokens} rows
 * every other one is dropped and the stride doubles, so it ends with between {@code sampleTokens}
 * and {@code 2·sampleTokens} rows evenly spread over the set (all of them for a smaller set),
 * without knowing the set's size in advance. (AutoAWQ takes {@code n_tokens / 512} as its stride;
 * ours is that rounded down to a power of two.)
 */
public final class ActivationSummary implements InputStatistics {
    private final int cols;
    private final int sampleTokens;
    private final double[] sumAbs;
    private long tokens;
    private int stride = 1;
    private float[] sample;
    private int sampled;

    public ActivationSummary(int cols, int sampleTokens) {
        if (cols < 1 || sampleTokens < 1) throw new IllegalArgumentException("cols " + cols + " and sampleTokens " + sampleTokens + " must be positive");
        this.cols = cols;
        this.sampleTokens = sampleTokens;
        this.sumAbs = new double[cols];
        this.sample = new float[Math.multiplyExact(2 * sampleTokens, cols)];
    }

    @Override public void accept(float[] rows, int n, int c) {
        if (c != cols) throw new IllegalArgumentException("rows of " + c + " floats for a summary of " + cols);
        for (int t = 0; t < n; t++) {
            int o = t * cols;
            for (int k = 0; k < cols; k++) sumAbs[k] += Math.abs(rows[o + k]);
            if (tokens % stride == 0) {
                if (sampled == 2 * sampleTokens) thin();
                if (tokens % stride == 0) System.arraycopy(rows, o, sample, sampled++ * cols, cols);
            }
            tokens++;
        }
    }

    private void thin() {
        for (int i = 0; i < sampled / 2; i++) System.arraycopy(sample, 2 * i * cols, sample, i * cols, cols);
        sampled /= 2;
        stride *= 2;
    }

    /** Mean |x| per channel. */
    public float[] meanAbs() {
        if (tokens == 0) throw new IllegalStateException("no calibration tokens seen");
        float[] m = new float[cols];
        for (int k = 0; k < cols; k++) m[k] = (float) (sumAbs[k] / tokens);
        return m;
    }

    /** The sampled rows, {@link #sampledTokens()} × cols, a copy. */
    public float[] sample() { return Arrays.copyOf(sample, sampled * cols); }

    public int sampledTokens() { return sampled; }

    public long tokens() { return tokens; }

    @Override public long bytes() { return 8L * cols + 4L * sample.length; }
}
