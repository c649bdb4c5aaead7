package io.modelopt.core.kernel;

import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
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
 * Angles, cosines and sines are computed in double and rounded once to float, so the table is as
 * close as float allows to a float64 reference (llama.cpp accumulates the angle in float, HF in
 * float32; both differ from the exact value by far less than the tolerances we test).
 *
 * <p>{@link #rotate} applies the rotation in one of the two element orders (see
 * {@link RopeConvention}); the pair frequency is the same in both, which is why a GGUF with
 * permuted Q/K rows and an HF checkpoint give the same logits.
 */
public final class Rope {
    private final int headDim;
    private final double[] invFreq;
    private final double positionScale;

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
        double posScale = 1.0;
        if (freqFactors != null) {
            if (freqFactors.length != pairs) {
                throw new IllegalArgumentException("rope_freqs has " + freqFactors.length + " factors, expected headDim/2 = " + pairs);
            }
            for (int i = 0; i < pairs; i++) invFreq[i] /= freqFactors[i];
        } else {
            switch (type) {
                case "none", "default" -> { }
                case "linear" -> posScale = 1.0 / checkFactor(scaling);
                case "llama3" -> applyLlama3(invFreq, scaling);
                default -> throw new UnsupportedOperationException("RoPE scaling type '" + scaling.type()
                        + "' is not supported (supported: llama3, linear)");
            }
        }
        this.positionScale = posScale;
    }

    private static double checkFactor(RopeScaling s) {
        if (!(s.factor() > 0)) throw new IllegalArgumentException("RoPE scaling factor must be > 0, got " + s.factor());
        return s.factor();
    }

    /** transformers' {@code _compute_llama3_parameters}, element by element. */
    private static void applyLlama3(double[] invFreq, RopeScaling s) {
        double factor = checkFactor(s);
        double low = s.lowFreqFactor(), high = s.highFreqFactor();
        double oldCtx = s.originalMaxPositions();
        if (!(high > low) || !(oldCtx > 0)) {
            throw new IllegalArgumentException("llama3 RoPE scaling needs high_freq_factor > low_freq_factor and original_max_position_embeddings > 0, got " + s);
        }
        double lowFreqWavelen = oldCtx / low;
        double highFreqWavelen = oldCtx / high;
        for (int i = 0; i < invFreq.length; i++) {
            double wavelen = 2 * Math.PI / invFreq[i];
            if (wavelen > lowFreqWavelen) {
                invFreq[i] = invFreq[i] / factor;
            } else if (wavelen >= highFreqWavelen) {
                double smooth = (oldCtx / wavelen - low) / (high - low);
                invFreq[i] = (1 - smooth) * invFreq[i] / factor + smooth * invFreq[i];
            }
        }
    }

    public int headDim() { return headDim; }

    /** The angular frequency of pair {@code i} (after scaling), for tests and reports. */
    public double inverseFrequency(int i) { return invFreq[i]; }

    /** Writes the headDim/2 cosines and sines for {@code position} at {@code cos[off..]}, {@code sin[off..]}. */
    public void cosSin(int position, float[] cos, float[] sin, int off) {
        double p = position * positionScale;
        for (int i = 0; i < invFreq.length; i++) {
            double angle = p * invFreq[i];
            cos[off + i] = (float) Math.cos(angle);
            sin[off + i] = (float) Math.sin(angle);
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
