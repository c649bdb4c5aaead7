package io.modelopt.core.synthetic;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The shape of a synthetic Llama model: everything {@code config.json} / the GGUF {@code llama.*}
 * keys say, plus the standard deviation of the random weights. Immutable; build with
 * {@link #builder()} or take a named preset ({@link #preset(String)}).
 *
 * <p>Presets (the shapes of {@code shared/fixtures/PERF.md}, so our numbers can be set beside
 * llama.cpp's on the same files):
 * <ul>
 *   <li>{@code small125m}: 768 hidden, 12 layers, 12 heads, 12 KV heads, FFN 2048, vocab 32000,
 *       untied output (134.1 M parameters);</li>
 *   <li>{@code tiny1b}: TinyLlama-1.1B: 2048 hidden, 22 layers, 32 heads, 4 KV heads, FFN 5632,
 *       vocab 32000, untied output (1.100 B parameters);</li>
 *   <li>{@code micro}: 64 hidden, 2 layers, 4 heads, 2 KV heads, FFN 128, vocab 512, context 128,
 *       for tests (a few hundred KB).</li>
 * </ul>
 * All use context 2048 (micro 128), RoPE θ 10000, RMS ε 1e-5 and weights N(0, 0.02).
 *
 * @param name             short name used in file names and {@code general.name} (lower case, [a-z0-9_-])
 * @param hiddenSize       embedding length; a multiple of 32 (the Q8_0/Q4_0 block) and of {@code numHeads}
 * @param numLayers        transformer blocks
 * @param numHeads         query heads; {@code hiddenSize / numHeads} is the (even) head dimension
 * @param numKvHeads       key/value heads; divides {@code numHeads}
 * @param intermediateSize SwiGLU width; a multiple of 32 ({@code ffn_down} rows are that long)
 * @param vocabSize        tokens; at least {@link SyntheticVocabulary#MIN_SIZE}
 * @param contextLength    trained context length written to the metadata
 * @param ropeTheta        RoPE frequency base
 * @param rmsNormEps       RMSNorm epsilon
 * @param tiedEmbeddings   no {@code output.weight}: the classifier is {@code token_embd}
 * @param weightStd        standard deviation of the matrix weights (norm weights are 1.0)
 */
public record SyntheticSpec(String name, int hiddenSize, int numLayers, int numHeads, int numKvHeads, int intermediateSize,
                            int vocabSize, int contextLength, float ropeTheta, float rmsNormEps, boolean tiedEmbeddings,
                            float weightStd) {

    /** Quantization block every row length must be a multiple of (Q8_0 and Q4_0 hold 32 weights). */
    public static final int ROW_MULTIPLE = 32;

    public static final SyntheticSpec SMALL_125M = builder("small125m").hiddenSize(768).numLayers(12).numHeads(12).numKvHeads(12)
            .intermediateSize(2048).vocabSize(32000).contextLength(2048).build();
    public static final SyntheticSpec TINY_1B = builder("tiny1b").hiddenSize(2048).numLayers(22).numHeads(32).numKvHeads(4)
            .intermediateSize(5632).vocabSize(32000).contextLength(2048).build();
    public static final SyntheticSpec MICRO = builder("micro").hiddenSize(64).numLayers(2).numHeads(4).numKvHeads(2)
            .intermediateSize(128).vocabSize(512).contextLength(128).build();

    private static final List<SyntheticSpec> PRESETS = List.of(SMALL_125M, TINY_1B, MICRO);

    public SyntheticSpec {
        Objects.requireNonNull(name, "name");
        if (!name.matches("[a-z0-9][a-z0-9_-]*")) throw new IllegalArgumentException("synthetic model name '" + name + "' must match [a-z0-9][a-z0-9_-]*");
        positive("hiddenSize", hiddenSize);
        positive("numLayers", numLayers);
        positive("numHeads", numHeads);
        positive("numKvHeads", numKvHeads);
        positive("intermediateSize", intermediateSize);
        positive("contextLength", contextLength);
        if (hiddenSize % ROW_MULTIPLE != 0) throw new IllegalArgumentException("hiddenSize " + hiddenSize + " is not a multiple of " + ROW_MULTIPLE + " (the Q8_0/Q4_0 block)");
        if (intermediateSize % ROW_MULTIPLE != 0) {
            throw new IllegalArgumentException("intermediateSize " + intermediateSize + " is not a multiple of " + ROW_MULTIPLE + " (the Q8_0/Q4_0 block)");
        }
        if (hiddenSize % numHeads != 0 || (hiddenSize / numHeads) % 2 != 0) {
            throw new IllegalArgumentException("hiddenSize " + hiddenSize + " does not split into " + numHeads + " heads of even size");
        }
        if (numHeads % numKvHeads != 0) throw new IllegalArgumentException("numKvHeads " + numKvHeads + " does not divide numHeads " + numHeads);
        if (vocabSize < SyntheticVocabulary.MIN_SIZE) {
            throw new IllegalArgumentException("vocabSize " + vocabSize + " is below " + SyntheticVocabulary.MIN_SIZE + " (control, byte and base tokens)");
        }
        if (!(ropeTheta > 0) || !(rmsNormEps > 0) || !(weightStd > 0) || !Float.isFinite(weightStd)) {
            throw new IllegalArgumentException("ropeTheta, rmsNormEps and weightStd must be positive: " + ropeTheta + ", " + rmsNormEps + ", " + weightStd);
        }
    }

    private static void positive(String what, int v) {
        if (v < 1) throw new IllegalArgumentException(what + " (" + v + ") must be >= 1");
    }

    /** The named presets: small125m, tiny1b, micro. */
    public static List<SyntheticSpec> presets() { return PRESETS; }

    /** The preset called {@code name} (case-insensitive), or an exception listing them. */
    public static SyntheticSpec preset(String name) {
        for (SyntheticSpec s : PRESETS) if (s.name.equalsIgnoreCase(name)) return s;
        throw new IllegalArgumentException("no synthetic preset '" + name + "' (presets: "
                + PRESETS.stream().map(SyntheticSpec::name).toList() + ")");
    }

    /** Whether this spec is exactly the preset of its name (cache names then need no fingerprint). */
    public boolean isPreset() { return PRESETS.contains(this); }

    public int headDim() { return hiddenSize / numHeads; }

    public int kvDim() { return numKvHeads * headDim(); }

    /** Parameters counted as llama.cpp counts them: every stored element (the tied classifier once). */
    public long parameterCount() {
        long h = hiddenSize, f = intermediateSize, kv = kvDim();
        long perLayer = 2 * h + h * h * 2 + 2 * h * kv + 3 * h * f;
        return (long) vocabSize * h * (tiedEmbeddings ? 1 : 2) + h + numLayers * perLayer;
    }

    /**
     * A short hex digest of every field, so that two different custom shapes under one name never
     * share a cache file (stable across runs and JVMs: built from the fields' text, FNV-1a).
     */
    public String fingerprint() {
        String s = String.format(Locale.ROOT, "%s|%d|%d|%d|%d|%d|%d|%d|%08x|%08x|%b|%08x", name, hiddenSize, numLayers, numHeads, numKvHeads,
                intermediateSize, vocabSize, contextLength, Float.floatToIntBits(ropeTheta), Float.floatToIntBits(rmsNormEps),
                tiedEmbeddings, Float.floatToIntBits(weightStd));
        return String.format(Locale.ROOT, "%08x", (int) (SyntheticWeights.fnv1a(s) ^ (SyntheticWeights.fnv1a(s) >>> 32)));
    }

    public static Builder builder(String name) { return new Builder(name); }

    public Builder toBuilder() {
        return new Builder(name).hiddenSize(hiddenSize).numLayers(numLayers).numHeads(numHeads).numKvHeads(numKvHeads)
                .intermediateSize(intermediateSize).vocabSize(vocabSize).contextLength(contextLength).ropeTheta(ropeTheta)
                .rmsNormEps(rmsNormEps).tiedEmbeddings(tiedEmbeddings).weightStd(weightStd);
    }

    @Override public String toString() {
        return String.format(Locale.ROOT, "%s[hidden %d, %d layers, %d heads, %d kv heads, ffn %d, vocab %d, ctx %d, %s, %.1fM params]",
                name, hiddenSize, numLayers, numHeads, numKvHeads, intermediateSize, vocabSize, contextLength,
                tiedEmbeddings ? "tied" : "untied", parameterCount() / 1e6);
    }

    /** Builder; defaults: context 2048, RoPE θ 10000, ε 1e-5, untied, std 0.02. The dimensions have no default. */
    public static final class Builder {
        private String name;
        private int hiddenSize, numLayers, numHeads, numKvHeads, intermediateSize, vocabSize = 32000, contextLength = 2048;
        private float ropeTheta = 10000f, rmsNormEps = 1e-5f, weightStd = 0.02f;
        private boolean tiedEmbeddings;

        private Builder(String name) { this.name = name; }

        public Builder name(String v) { name = v; return this; }
        public Builder hiddenSize(int v) { hiddenSize = v; return this; }
        public Builder numLayers(int v) { numLayers = v; return this; }
        public Builder numHeads(int v) { numHeads = v; return this; }
        /** Default: {@code numHeads} (multi-head attention). */
        public Builder numKvHeads(int v) { numKvHeads = v; return this; }
        public Builder intermediateSize(int v) { intermediateSize = v; return this; }
        public Builder vocabSize(int v) { vocabSize = v; return this; }
        public Builder contextLength(int v) { contextLength = v; return this; }
        public Builder ropeTheta(float v) { ropeTheta = v; return this; }
        public Builder rmsNormEps(float v) { rmsNormEps = v; return this; }
        public Builder tiedEmbeddings(boolean v) { tiedEmbeddings = v; return this; }
        public Builder weightStd(float v) { weightStd = v; return this; }

        public SyntheticSpec build() {
            return new SyntheticSpec(name, hiddenSize, numLayers, numHeads, numKvHeads == 0 ? numHeads : numKvHeads, intermediateSize,
                    vocabSize, contextLength, ropeTheta, rmsNormEps, tiedEmbeddings, weightStd);
        }
    }
}
