package io.modelopt.quantization.awq;

/**
 * AWQ's search settings, AutoAWQ's defaults: the scale exponent α over {@code i / scaleGrid} for
 * {@code i = 0 … scaleGrid − 1}; the clip search shrinking each group's |w| maximum to
 * {@code 1 − i / clipGrid} for {@code i < maxShrink · clipGrid}, measured on at most about
 * {@code clipSampleTokens} calibration tokens.
 *
 * @param scaleGrid        α candidates ({@code n_grid = 20})
 * @param clip             whether to run the clip search ({@code apply_clip = True})
 * @param clipGrid         clip grid ({@code n_grid = 20})
 * @param maxShrink        largest shrink of the maximum ({@code max_shrink = 0.5})
 * @param clipSampleTokens tokens the clip search measures on ({@code n_sample_token = 512})
 * @param searchTokens     the most calibration tokens the α search's attention and MLP losses run on: the
 *                         first whole sequences (a seeded random choice) up to this many, at least one;
 *                         0 for all. Default 16,384 (32 × 512), so that the default 128 × 512 set searches on a
 *                         quarter of its tokens: those losses rerun the module 20 times per group, and
 *                         AutoAWQ's own default set (128 Pile texts, ≤ 512 tokens each) is of that size. The
 *                         mean |x|, the o/down losses and the clip sample use every token.
 * @param duoScaling       AutoAWQ's {@code duo_scaling}, on by default as there (scales also divided by the
 *                         weights' relative magnitude, {@link ScaleSearch#duoScales}); off: the paper's {@code x̄^α}
 */
public record AwqConfig(int scaleGrid, boolean clip, int clipGrid, double maxShrink, int clipSampleTokens, int searchTokens, boolean duoScaling) {
    public AwqConfig {
        if (scaleGrid < 1) throw new IllegalArgumentException("scaleGrid must be positive, got " + scaleGrid);
        if (clipGrid < 1) throw new IllegalArgumentException("clipGrid must be positive, got " + clipGrid);
        if (!(maxShrink >= 0 && maxShrink < 1)) throw new IllegalArgumentException("maxShrink must be in [0, 1), got " + maxShrink);
        if (clipSampleTokens < 1) throw new IllegalArgumentException("clipSampleTokens must be positive, got " + clipSampleTokens);
        if (searchTokens < 0) throw new IllegalArgumentException("searchTokens must be 0 (all) or positive, got " + searchTokens);
    }

    public static AwqConfig defaults() { return builder().build(); }

    public static Builder builder() { return new Builder(); }

    public static final class Builder {
        private int scaleGrid = 20;
        private boolean clip = true;
        private int clipGrid = 20;
        private double maxShrink = 0.5;
        private int clipSampleTokens = 512;
        private int searchTokens = 16_384;
        private boolean duoScaling = true;

        private Builder() {}

        public Builder scaleGrid(int n) { this.scaleGrid = n; return this; }
        public Builder clip(boolean clip) { this.clip = clip; return this; }
        public Builder clipGrid(int n) { this.clipGrid = n; return this; }
        public Builder maxShrink(double s) { this.maxShrink = s; return this; }
        public Builder clipSampleTokens(int n) { this.clipSampleTokens = n; return this; }
        public Builder searchTokens(int n) { this.searchTokens = n; return this; }

        public Builder duoScaling(boolean duo) { this.duoScaling = duo; return this; }

        public AwqConfig build() { return new AwqConfig(scaleGrid, clip, clipGrid, maxShrink, clipSampleTokens, searchTokens, duoScaling); }
    }
}
