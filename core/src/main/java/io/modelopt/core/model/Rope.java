package io.modelopt.core.model;

import java.util.Locale;

/**
 * Rotary position embedding. Pair {@code i} of a head (i in [0, headDim/2)) is rotated by
 * {@code position · invFreq[i]} with {@code invFreq[i] = theta^(-2i/headDim)}, optionally
 * rescaled:
 * <ul>
 *   <li>{@code llama3} (Llama 3.1+): transformers' {@code _compute_llama3_parameters}: long
 *   wavelengths divided by {@code factor}, short ones kept, a smooth blend in between. A GGUF
 *   carries the same numbers as the {@code rope_freqs.weight} tensor (divisors per pair), which
 *   takes precedence when given.</li>
 *   <li>{@code linear}: positions divided by {@code factor}.</li>
 * </ul>
 * The angles are computed exactly as llama.cpp's CPU backend does ({@code ggml_rope_cache_init}):
 * in float, starting from the position and multiplying by {@code theta_scale = powf(theta,
 * -2/headDim)} pair after pair, divided by the pair's frequency factor, times the linear
 * frequency scale, then {@code cosf}/{@code sinf}. That is a few float ulps away from the exact
 * angle (far below what F32 logits notice), but it is the same few ulps as llama.cpp: a quantized
 * model quantizes every activation to 8 bits, and an ulp of difference upstream can move a value
 * across a rounding boundary, so matching llama.cpp's logits to 1e-3 needs its exact arithmetic.
 * {@link #inverseFrequency} reports the exact (double) frequencies.
 *
 * <p>{@link #rotate} applies the rotation in one of the two element orders (see
 * {@link RopeConvention}); the pair frequency is the same in both, which is why a GGUF with
 * permuted Q/K rows and an HF checkpoint give the same logits.
 *
 * <p>It lives with the model, not with the kernels: its frequencies and element order are the
 * model's configuration ({@link ModelConfig}), and the kernel package must not depend on the model
 * package (ggml's line between the compute layer and the graph).
 */
public final class Rope {
    private final int headDim;
    private final double[] invFreq;
    /** Per-pair divisors of the angle (rope_freqs / llama3), or null. */
    private final float[] freqFactors;
    /** llama.cpp's {@code freq_scale}: 1, or 1/factor for linear scaling. */
    private final float freqScale;
    private final float thetaScale;

    /**
     * @param freqFactors per-pair divisors of the frequency (GGUF {@code rope_freqs.weight}), or null
     */
    public Rope(int headDim, double theta, RopeScaling scaling, float[] freqFactors) {
        if (headDim <= 0 || headDim % 2 != 0) throw new IllegalArgumentException("RoPE head dimension must be even and positive, got " + headDim);
        if (!(theta > 0)) throw new IllegalArgumentException("RoPE theta must be > 0, got " + theta);
        this.headDim = headDim;
        int pairs = headDim / 2;
        invFreq = new double[pairs];
        for (int i = 0; i < pairs; i++) invFreq[i] = Math.pow(theta, -2.0 * i / headDim);
        String type = scaling == null || scaling.type() == null ? "none" : scaling.type().toLowerCase(Locale.ROOT);
        float scale = 1f;
        float[] factors = null;
        switch (type) {
            case "none", "default" -> { }
            case "linear" -> scale = (float) (1.0 / checkFactor(scaling));
            case "llama3" -> factors = freqFactors != null ? null : llama3Factors(invFreq, scaling);
            default -> throw new UnsupportedOperationException("RoPE scaling type '" + scaling.type()
                    + "' is not supported (supported: llama3, linear)");
        }
        if (freqFactors != null) {
            if (freqFactors.length != pairs) {
                throw new IllegalArgumentException("rope_freqs has " + freqFactors.length + " factors, expected headDim/2 = " + pairs);
            }
            factors = freqFactors.clone();
        }
        if (factors != null) for (int i = 0; i < pairs; i++) invFreq[i] /= factors[i];
        for (int i = 0; i < pairs; i++) invFreq[i] *= scale;
        this.freqFactors = factors;
        this.freqScale = scale;
        this.thetaScale = (float) Math.pow((float) theta, -2.0f / headDim);
    }

    private static double checkFactor(RopeScaling s) {
        if (!(s.factor() > 0)) throw new IllegalArgumentException("RoPE scaling factor must be > 0, got " + s.factor());
        return s.factor();
    }

    /**
     * The divisors transformers' {@code _compute_llama3_parameters} applies to the frequencies, as
     * llama.cpp's converter writes them into {@code rope_freqs.weight} (computed in double, stored as float).
     */
    private static float[] llama3Factors(double[] baseInvFreq, RopeScaling s) {
        double factor = checkFactor(s);
        double low = s.lowFreqFactor(), high = s.highFreqFactor();
        double oldCtx = s.originalMaxPositions();
        if (!(high > low) || !(oldCtx > 0)) {
            throw new IllegalArgumentException("llama3 RoPE scaling needs high_freq_factor > low_freq_factor and original_max_position_embeddings > 0, got " + s);
        }
        double lowFreqWavelen = oldCtx / low;
        double highFreqWavelen = oldCtx / high;
        float[] f = new float[baseInvFreq.length];
        for (int i = 0; i < f.length; i++) {
            double wavelen = 2 * Math.PI / baseInvFreq[i];
            if (wavelen < highFreqWavelen) {
                f[i] = 1f;
            } else if (wavelen > lowFreqWavelen) {
                f[i] = (float) factor;
            } else {
                double smooth = (oldCtx / wavelen - low) / (high - low);
                f[i] = (float) (1 / ((1 - smooth) / factor + smooth));
            }
        }
        return f;
    }

    public int headDim() { return headDim; }

    /** The exact angular frequency of pair {@code i} (after scaling, in radians per position), for tests and reports. */
    public double inverseFrequency(int i) { return invFreq[i]; }

    /**
     * Writes the headDim/2 cosines and sines for {@code position} at {@code cos[off..]},
     * {@code sin[off..]}, as {@code ggml_rope_cache_init} computes them.
     */
    public void cosSin(int position, float[] cos, float[] sin, int off) {
        float theta = position;
        for (int i = 0; i < invFreq.length; i++) {
            float angle = freqFactors == null ? theta : theta / freqFactors[i];
            angle = freqScale * angle;
            // (float) of the double result is the correctly rounded cosf/sinf
            cos[off + i] = (float) Math.cos(angle);
            sin[off + i] = (float) Math.sin(angle);
            theta *= thetaScale;
        }
    }

    /**
     * Rotates {@code nHeads} consecutive heads of {@code headDim} starting at {@code x[off]} in
     * place, with the cosines/sines of one position at {@code cos[csOff..csOff+headDim/2)}.
     */
    public static void rotate(RopeConvention convention, float[] x, int off, int nHeads, int headDim, float[] cos, float[] sin, int csOff) {
        int half = headDim / 2;
        for (int h = 0; h < nHeads; h++) {
            int base = off + h * headDim;
            if (convention == RopeConvention.ADJACENT_PAIRS) {
                for (int i = 0; i < half; i++) {
                    float c = cos[csOff + i], s = sin[csOff + i];
                    float x0 = x[base + 2 * i], x1 = x[base + 2 * i + 1];
                    x[base + 2 * i] = x0 * c - x1 * s;
                    x[base + 2 * i + 1] = x0 * s + x1 * c;
                }
            } else {
                for (int i = 0; i < half; i++) {
                    float c = cos[csOff + i], s = sin[csOff + i];
                    float x0 = x[base + i], x1 = x[base + i + half];
                    x[base + i] = x0 * c - x1 * s;
                    x[base + i + half] = x0 * s + x1 * c;
                }
            }
        }
    }
}
