package io.modelopt.quantization.format;

import java.util.Locale;

/**
 * The arithmetic of a group-wise integer weight: {@code bits} per code, a scale (and, when
 * asymmetric, a zero point) per group of {@code groupSize} consecutive weights of a row, and
 * {@code w = scale · (code − zero)}, where a code is unsigned in {@code [0, 2^bits)}. A symmetric
 * scheme has no stored zero point: it is {@code 2^(bits−1)} (so INT8 symmetric codes are the
 * signed values plus 128, and INT4 symmetric codes are those of ggml's Q4_0).
 *
 * @param bits      2, 3, 4 or 8
 * @param groupSize 32, 64 or 128 weights per group, or {@link #PER_CHANNEL} (−1) for one group per row
 * @param symmetric no zero points
 * @param scaleType how scales are stored
 */
public record IntScheme(int bits, int groupSize, boolean symmetric, ScaleType scaleType) {
    /** The group size written {@code --group-size -1}: one group per row (per-channel). */
    public static final int PER_CHANNEL = -1;

    /** How a scale is stored. */
    public enum ScaleType { F16, F32 }

    public IntScheme {
        if (bits != 2 && bits != 3 && bits != 4 && bits != 8) throw new IllegalArgumentException("bits must be 2, 3, 4 or 8, got " + bits);
        if (groupSize != PER_CHANNEL && groupSize != 32 && groupSize != 64 && groupSize != 128) {
            throw new IllegalArgumentException("group size must be 32, 64, 128 or -1 (per channel), got " + groupSize);
        }
        if (scaleType == null) throw new IllegalArgumentException("scale type is required");
    }

    /** Per-channel symmetric INT8 with F16 scales. */
    public static IntScheme int8() { return new IntScheme(8, PER_CHANNEL, true, ScaleType.F16); }

    /** Group-wise INT{@code bits}, F16 scales. */
    public static IntScheme of(int bits, int groupSize, boolean symmetric) { return new IntScheme(bits, groupSize, symmetric, ScaleType.F16); }

    /** Weights per group in a row of {@code cols} weights. */
    public int groupSize(int cols) { return groupSize == PER_CHANNEL ? cols : groupSize; }

    /** Groups in a row of {@code cols} weights (which must be a whole number of groups). */
    public int groups(int cols) { return cols / groupSize(cols); }

    /** Whether a row of {@code cols} weights holds whole groups. */
    public boolean fits(int cols) { return cols > 0 && cols % groupSize(cols) == 0; }

    /** The largest code, {@code 2^bits − 1}. */
    public int maxCode() { return (1 << bits) - 1; }

    /** The implicit zero point of a symmetric scheme, {@code 2^(bits−1)}. */
    public int symmetricZero() { return 1 << (bits - 1); }

    /** Bytes of one stored scale. */
    public int scaleBytes() { return scaleType == ScaleType.F16 ? 2 : 4; }

    /**
     * Stored bits per weight of a {@code rows × cols} matrix in our own layout: the codes, the
     * scales and (asymmetric) the zero points packed at the code width, one set per group.
     */
    public double bitsPerWeight(int cols) {
        int g = groupSize(cols);
        return bits + 8.0 * scaleBytes() / g + (symmetric ? 0 : (double) bits / g);
    }

    /** The name a format of this scheme is registered under, e.g. {@code INT4_G128_ASYM}, {@code INT8_CHANNEL_SYM}, {@code INT8_CHANNEL_SYM_F32}. */
    public String formatName() {
        String g = groupSize == PER_CHANNEL ? "CHANNEL" : "G" + groupSize;
        return String.format(Locale.ROOT, "INT%d_%s_%s%s", bits, g, symmetric ? "SYM" : "ASYM", scaleType == ScaleType.F32 ? "_F32" : "");
    }

    @Override public String toString() { return formatName(); }
}
