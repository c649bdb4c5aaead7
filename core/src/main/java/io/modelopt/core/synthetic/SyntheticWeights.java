package io.modelopt.core.synthetic;

import java.nio.charset.StandardCharsets;

/**
 * The random weights of a synthetic model: a pure function of (seed, tensor name, element index),
 * so any element can be produced on its own, in any order, by any number of threads, and the same
 * seed always gives the same bits on every JVM.
 *
 * <h2>How a value is made</h2>
 * <ol>
 *   <li>A 64-bit stream key per tensor: {@code mix64(seed ^ mix64(fnv1a(name)))}.</li>
 *   <li>Elements come in groups of four: group {@code g} hashes the counter
 *       {@code key + (g+1)·γ} with SplitMix64's finalizer ({@code γ} = 0x9E3779B97F4A7C15, the golden
 *       ratio increment of {@link java.util.SplittableRandom}, which is the same generator run in
 *       counter mode). Its four 16-bit lanes are four independent uniform indices {@code u}.</li>
 *   <li>The value is {@code table[u]}: the normal quantile {@code Φ⁻¹((u + 0.5) / 65536)} times the
 *       standard deviation, rounded to the nearest float16. So the weights follow N(0, σ²) sampled at
 *       65,536 equiprobable levels (tails cut at ±4.33σ), and are exactly representable in F16 —
 *       as PERF.md's models, "drawn from N(0, 0.02) as float16", which llama-quantize then quantized.
 *       F32, F16, Q8_0 and Q4_0 files of one seed therefore hold the same model: F32 and F16 exactly,
 *       Q8_0/Q4_0 as what ggml's quantizers make of those F16 values.</li>
 * </ol>
 * A table lookup per value (the table is 256 KiB, it stays in L2) plus one 64-bit hash per four
 * values: about a nanosecond per weight, versus tens for Box-Muller's log/sqrt/cos.
 *
 * <p>The quantiles come from Acklam's rational approximation of the inverse normal CDF
 * (relative error below 1.2e-9, far below float16's 4.9e-4 spacing), computed with
 * {@link StrictMath} so the table is bit-identical everywhere.
 */
public final class SyntheticWeights {
    private static final long GAMMA = 0x9E3779B97F4A7C15L;
    private static final int LEVELS = 1 << 16;

    private final long seed;
    private final float std;
    private final float[] table;

    /** Weights N(0, {@code std}²) (rounded to float16) for {@code seed}. */
    public SyntheticWeights(long seed, float std) {
        if (!(std > 0) || !Float.isFinite(std)) throw new IllegalArgumentException("std must be positive, not " + std);
        this.seed = seed;
        this.std = std;
        this.table = new float[LEVELS];
        for (int u = 0; u < LEVELS; u++) {
            double z = inverseNormalCdf((u + 0.5) / LEVELS);
            table[u] = Float.float16ToFloat(Float.floatToFloat16((float) (z * std)));
        }
    }

    public long seed() { return seed; }

    public float std() { return std; }

    /** The stream key of the tensor called {@code name} (its canonical GGUF name). */
    public long tensorKey(String name) {
        return mix64(seed ^ mix64(fnv1a(name)));
    }

    /** Element {@code index} (row-major, ggml order: index = row × ne0 + column) of the tensor with key {@code key}. */
    public float value(long key, long index) {
        long h = mix64(key + ((index >>> 2) + 1) * GAMMA);
        return table[(int) (h >>> (16 * (index & 3))) & 0xFFFF];
    }

    /** Fills {@code dst[off .. off+n)} with elements {@code first .. first+n} of the tensor with key {@code key}. */
    public void fill(long key, long first, float[] dst, int off, int n) {
        int i = 0;
        // leading elements up to a group boundary
        while (i < n && ((first + i) & 3) != 0) {
            dst[off + i] = value(key, first + i);
            i++;
        }
        long g = ((first + i) >>> 2) + 1;
        for (; i + 4 <= n; i += 4, g++) {
            long h = mix64(key + g * GAMMA);
            int o = off + i;
            dst[o] = table[(int) h & 0xFFFF];
            dst[o + 1] = table[(int) (h >>> 16) & 0xFFFF];
            dst[o + 2] = table[(int) (h >>> 32) & 0xFFFF];
            dst[o + 3] = table[(int) (h >>> 48) & 0xFFFF];
        }
        for (; i < n; i++) dst[off + i] = value(key, first + i);
    }

    /** SplitMix64's output function (Steele, Lea, Flood 2014; the finalizer of {@link java.util.SplittableRandom}). */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** 64-bit FNV-1a of the UTF-8 bytes: a hash fixed by its definition, unlike {@link String#hashCode} in spirit. */
    static long fnv1a(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xFF;
            h *= 0x100000001b3L;
        }
        return h;
    }

    private static final double[] A = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
    private static final double[] B = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
            6.680131188771972e+01, -1.328068155288572e+01};
    private static final double[] C = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
    private static final double[] D = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
            3.754408661907416e+00};

    /** Φ⁻¹(p) for 0 &lt; p &lt; 1: P. J. Acklam's algorithm (2003), relative error below 1.15e-9. */
    static double inverseNormalCdf(double p) {
        if (!(p > 0 && p < 1)) throw new IllegalArgumentException("p must be in (0, 1), not " + p);
        final double low = 0.02425;
        if (p < low) return tail(p);
        if (p > 1 - low) return -tail(1 - p);
        double q = p - 0.5, r = q * q;
        return (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
                / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
    }

    private static double tail(double p) {
        double q = StrictMath.sqrt(-2 * StrictMath.log(p));
        return (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
                / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
    }
}
