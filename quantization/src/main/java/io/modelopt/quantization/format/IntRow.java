package io.modelopt.quantization.format;

/**
 * One row of a group-wise integer weight in logical form, as every stored layout (ours, AutoAWQ's,
 * GPTQ's, compressed-tensors') decodes it: unsigned codes, and per group a scale and a zero point
 * ({@code w[k] = scales[g] · (codes[k] − zeros[g])} with {@code g = k / groupSize}; a symmetric
 * scheme's zeros are all {@link IntScheme#symmetricZero()}). Reusable scratch: sized once for a
 * row length, filled by {@link IntLayout#readRow}.
 */
public final class IntRow {
    public final int[] codes;
    public final float[] scales;
    public final int[] zeros;
    /** Weights per group of this row. */
    public final int groupSize;

    public IntRow(IntScheme scheme, int cols) {
        if (!scheme.fits(cols)) throw new IllegalArgumentException(scheme + ": a row of " + cols + " weights is not a whole number of groups");
        this.groupSize = scheme.groupSize(cols);
        this.codes = new int[cols];
        this.scales = new float[cols / groupSize];
        this.zeros = new int[cols / groupSize];
    }

    /** Weight {@code k} as the scheme defines it (float arithmetic: {@code scale · (code − zero)}). */
    public float value(int k) {
        int g = k / groupSize;
        return scales[g] * (codes[k] - zeros[g]);
    }
}
