package io.modelopt.core;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What {@link ModelOptimizer#quantize(QuantizationSpec)} is asked to do: a method, its integer
 * parameters, the per-tensor rules and (for the calibrated methods) the calibration data.
 * Immutable; made with a {@link Builder} from one of the factories.
 *
 * <pre>{@code
 * ModelOptimizer.load(p).quantize(QuantizationSpec.int4().groupSize(128).build()).build();
 * ModelOptimizer.load(p).quantize(QuantizationSpec.RTN_INT8);
 * QuantizationSpec.int4().rule("blk.*.attn_*", "INT8").rule("blk.3.*", "F16").build();
 * QuantizationSpec.gguf("q4_k_m").rule("token_embd.weight", "Q4_K").build();
 * }</pre>
 *
 * <p>Core only checks the spec's own consistency; the quantization module reads it (its layer
 * policy parses the rule targets, and a target it does not know fails there, naming the known
 * ones). The fields that do not apply to a method (bits of a GGUF preset) are ignored by it.
 *
 * @param method        "rtn", "awq", "gptq", or a llama.cpp type or preset name ("q8_0", "q4_k_m"), lower case
 * @param bits          2, 3, 4 or 8 for rtn/awq/gptq; 0 for GGUF methods (the type says it)
 * @param groupSize     32, 64, 128, or {@link #PER_CHANNEL} (−1) for one group per output row
 * @param symmetric     no zero points ({@code w = scale·(q − 2^(bits−1))})
 * @param clipSearch    shrink each group's range over a grid and keep the scale with the lowest weight MSE
 *                      (rtn; gptq and awq+gptq: GPTQ's {@code find_params} with {@code mse})
 * @param scaleType     how scales are stored
 * @param keepEmbeddingAndOutput whether {@code token_embd} and {@code output} (lm_head) stay at full
 *                      precision unless a rule names them (true for rtn/awq/gptq; false for GGUF
 *                      presets, which follow llama-quantize's own choices)
 * @param rules         per-tensor overrides, applied in order (a later matching rule wins)
 * @param calibration   calibration data for AWQ/GPTQ, or null
 * @param actOrder      GPTQ: quantize columns in descending order of the Hessian's diagonal ({@code desc_act}),
 *                      with static groups
 * @param damp          GPTQ: dampening as a fraction of the Hessian's mean diagonal (default {@value #DEFAULT_DAMP})
 * @param duoScaling    AWQ: AutoAWQ's {@code duo_scaling} (its default, on): each candidate scale is
 *                      {@code x̄^α / w̄^(1−α)}, the weights' relative magnitude per input channel dividing the
 *                      activations' mean; off, the paper's {@code x̄^α}. Always true for the other methods.
 */
public record QuantizationSpec(String method, int bits, int groupSize, boolean symmetric, boolean clipSearch,
                               ScaleType scaleType, boolean keepEmbeddingAndOutput, List<LayerRule> rules,
                               CalibrationSpec calibration, boolean actOrder, double damp, boolean duoScaling) {

    /** The group size written {@code --group-size -1}: one group per output row (per-channel). */
    public static final int PER_CHANNEL = -1;

    /** Target of a rule that leaves matching tensors as they are in the input. */
    public static final String KEEP = "keep";

    private static final Set<String> INTEGER_METHODS = Set.of("rtn", "awq", "gptq", "awq+gptq");

    /** GPTQ's default dampening, 1% of the Hessian's mean diagonal. */
    public static final double DEFAULT_DAMP = 0.01;

    /**
     * llama-quantize's types and presets (lower case) a GGUF method may name; {@code q3_k},
     * {@code q4_k} and {@code q5_k} are its aliases of the {@code _m} presets.
     */
    public static final Set<String> GGUF_METHODS = Set.of("q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q2_k_s",
            "q3_k", "q3_k_s", "q3_k_m", "q3_k_l", "q4_k", "q4_k_s", "q4_k_m", "q5_k", "q5_k_s", "q5_k_m", "q6_k");

    // The constants below are built after the method sets above (static initializers run in order).
    /** Per-channel symmetric INT8 with F16 scales, round to nearest. */
    public static final QuantizationSpec RTN_INT8 = int8().build();

    /** Group-wise (128) asymmetric INT4 with F16 scales and zero points, round to nearest (AutoAWQ's default scheme). */
    public static final QuantizationSpec RTN_INT4 = int4().build();

    /** How scales are stored. */
    public enum ScaleType { F16, F32 }

    /**
     * One override: tensors whose canonical name matches {@code pattern} get {@code target}.
     *
     * @param pattern a glob over the canonical name ({@code *} any run of characters, dots
     *                included; {@code ?} one character), matched against the whole name or the
     *                name without its {@code .weight} suffix; or {@code re:REGEX}, found anywhere
     *                in the name (as llama.cpp's {@code --tensor-type} does)
     * @param target  {@value #KEEP}, one of our formats ({@code INT8}, {@code INT4_G128},
     *                {@code INT4_G32_SYM}, {@code INT8_CHANNEL_SYM_F32}...), a ggml type
     *                ({@code Q4_K}, {@code Q8_0}) or {@code F16}/{@code F32}/{@code BF16}
     */
    public record LayerRule(String pattern, String target) {
        public LayerRule {
            if (pattern == null || pattern.isBlank()) throw new IllegalArgumentException("a layer rule needs a tensor-name pattern");
            if (target == null || target.isBlank()) throw new IllegalArgumentException("layer rule '" + pattern + "' needs a target type (or 'keep')");
            pattern = pattern.trim();
            target = target.trim();
        }

        /** {@code PATTERN=TYPE}, as {@code --override} and llama.cpp's {@code --tensor-type} take it. */
        public static LayerRule parse(String text) {
            int eq = text == null ? -1 : text.lastIndexOf('=');
            if (eq <= 0 || eq == text.length() - 1) throw new IllegalArgumentException("a layer rule is PATTERN=TYPE, got '" + text + "'");
            return new LayerRule(text.substring(0, eq), text.substring(eq + 1));
        }

        @Override public String toString() { return pattern + "=" + target; }
    }

    /**
     * The calibration data of AWQ and GPTQ (read by the calibration issue's quantizers).
     *
     * @param files          text files sampled from
     * @param samples        sequences drawn
     * @param sequenceLength tokens per sequence
     * @param seed           of the sampling
     */
    public record CalibrationSpec(List<Path> files, int samples, int sequenceLength, long seed) {
        public CalibrationSpec {
            files = List.copyOf(files);
            if (files.isEmpty()) throw new IllegalArgumentException("calibration needs at least one text file");
            if (samples < 1) throw new IllegalArgumentException("calibration samples must be positive, got " + samples);
            if (sequenceLength < 1) throw new IllegalArgumentException("calibration sequence length must be positive, got " + sequenceLength);
        }
    }

    public QuantizationSpec {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(scaleType, "scaleType");
        rules = List.copyOf(rules);
    }

    /** Builder for per-channel symmetric INT8, round to nearest. */
    public static Builder int8() { return new Builder("rtn").bits(8).groupSize(PER_CHANNEL).symmetric(true); }

    /** Builder for INT4, group size 128, asymmetric, round to nearest (AutoAWQ's default). */
    public static Builder int4() { return new Builder("rtn").bits(4).groupSize(128).symmetric(false); }

    /** Builder for a llama.cpp type or preset ("q8_0", "q4_0", "q4_k_m"...), with its per-tensor choices. */
    public static Builder gguf(String preset) {
        return new Builder(preset).bits(0).groupSize(PER_CHANNEL).symmetric(false).keepEmbeddingAndOutput(false);
    }

    /** Builder for AWQ (INT4 g128 asymmetric; needs calibration data). */
    public static Builder awq() { return new Builder("awq").bits(4).groupSize(128).symmetric(false); }

    /** Builder for GPTQ (INT4 g128 asymmetric; needs calibration data). */
    public static Builder gptq() { return new Builder("gptq").bits(4).groupSize(128).symmetric(false); }

    /** Builder for AWQ's scales then GPTQ's rounding (INT4 g128 asymmetric; needs calibration data). */
    public static Builder awqGptq() { return new Builder("awq+gptq").bits(4).groupSize(128).symmetric(false); }

    /** Builder for any method by name (as {@code --method} takes it), with that method's defaults. */
    public static Builder method(String name) {
        String m = normalize(name);
        return switch (m) {
            case "rtn" -> int4();
            case "awq" -> awq();
            case "gptq" -> gptq();
            case "awq+gptq" -> awqGptq();
            default -> gguf(m);
        };
    }

    /** A builder starting from this spec. */
    public Builder toBuilder() {
        Builder b = new Builder(method).bits(bits).groupSize(groupSize).symmetric(symmetric).clipSearch(clipSearch)
                .scaleType(scaleType).keepEmbeddingAndOutput(keepEmbeddingAndOutput).calibration(calibration)
                .actOrder(actOrder).damp(damp).duoScaling(duoScaling);
        for (LayerRule r : rules) b.rule(r);
        return b;
    }

    /** Whether the method is a llama.cpp type or preset (the bits and group size are the type's). */
    public boolean isGguf() { return GGUF_METHODS.contains(method); }

    /** Every method name a spec may carry. */
    public static Set<String> knownMethods() {
        Set<String> all = new TreeSet<>(INTEGER_METHODS);
        all.addAll(GGUF_METHODS);
        return all;
    }

    private static String normalize(String name) {
        if (name == null || name.isBlank()) throw new IllegalArgumentException("a quantization method is required; known: " + String.join(", ", knownMethods()));
        return name.trim().toLowerCase(Locale.ROOT);
    }

    /** Short form for logs and errors: {@code rtn INT4 g128 asym}, {@code q4_k_m}, plus rules. */
    @Override public String toString() {
        StringBuilder sb = new StringBuilder(method);
        if (!isGguf()) {
            sb.append(" INT").append(bits).append(groupSize == PER_CHANNEL ? " per-channel" : " g" + groupSize)
                    .append(symmetric ? " sym" : " asym");
            if (scaleType == ScaleType.F32) sb.append(" f32-scales");
            if (clipSearch) sb.append(" clip-search");
            if (actOrder) sb.append(" act-order");
            if (damp != DEFAULT_DAMP) sb.append(" damp ").append(damp);
            if (!duoScaling) sb.append(" no-duo-scaling");
        }
        if (!rules.isEmpty()) sb.append(" rules ").append(rules);
        return sb.toString();
    }

    /** Builds a {@link QuantizationSpec}; {@link #build()} checks it. */
    public static final class Builder {
        private final String method;
        private int bits;
        private int groupSize = PER_CHANNEL;
        private boolean symmetric;
        private boolean clipSearch;
        private ScaleType scaleType = ScaleType.F16;
        private boolean keepEmbeddingAndOutput = true;
        private final List<LayerRule> rules = new ArrayList<>();
        private CalibrationSpec calibration;
        private boolean actOrder;
        private double damp = DEFAULT_DAMP;
        private boolean duoScaling = true;

        private Builder(String method) {
            this.method = normalize(method);
        }

        /** Bits per code: 2, 3, 4 or 8 (rtn, awq, gptq only). */
        public Builder bits(int bits) { this.bits = bits; return this; }

        /** 32, 64, 128, or {@link #PER_CHANNEL} (−1). */
        public Builder groupSize(int groupSize) { this.groupSize = groupSize; return this; }

        public Builder symmetric(boolean symmetric) { this.symmetric = symmetric; return this; }

        /** Searches each group's clipping range for the lowest weight MSE (slower; RTN only). */
        public Builder clipSearch(boolean clipSearch) { this.clipSearch = clipSearch; return this; }

        public Builder scaleType(ScaleType scaleType) { this.scaleType = scaleType; return this; }

        /** Whether {@code token_embd} and {@code output} stay at full precision unless a rule names them. */
        public Builder keepEmbeddingAndOutput(boolean keep) { this.keepEmbeddingAndOutput = keep; return this; }

        /** Adds an override; later rules win over earlier ones. */
        public Builder rule(String pattern, String target) { return rule(new LayerRule(pattern, target)); }

        public Builder rule(LayerRule rule) { rules.add(Objects.requireNonNull(rule, "rule")); return this; }

        /** Keeps the tensors matching {@code pattern} as they are in the input. */
        public Builder keep(String pattern) { return rule(pattern, KEEP); }

        public Builder calibration(CalibrationSpec calibration) { this.calibration = calibration; return this; }

        /** GPTQ's act-order ({@code desc_act}) with static groups. */
        public Builder actOrder(boolean actOrder) { this.actOrder = actOrder; return this; }

        /** GPTQ's dampening, a positive fraction of the Hessian's mean diagonal. */
        public Builder damp(double damp) { this.damp = damp; return this; }

        /** AWQ's {@code duo_scaling} (default on, as AutoAWQ); false searches the paper's {@code x̄^α} scales. */
        public Builder duoScaling(boolean duoScaling) { this.duoScaling = duoScaling; return this; }

        /**
         * @throws IllegalArgumentException an unknown method (naming the known ones), or bits, a
         *         group size or an option the method does not take
         */
        public QuantizationSpec build() {
            boolean gguf = GGUF_METHODS.contains(method);
            if (!gguf && !INTEGER_METHODS.contains(method)) {
                throw new IllegalArgumentException("unknown quantization method '" + method + "'; known: " + String.join(", ", knownMethods()));
            }
            if (gguf) {
                if (clipSearch) throw new IllegalArgumentException("clip search is an RTN option; " + method + " uses llama.cpp's own search");
                if (!duoScaling) throw new IllegalArgumentException("duo scaling is an AWQ option, not one of " + method);
                return new QuantizationSpec(method, 0, PER_CHANNEL, false, false, scaleType, keepEmbeddingAndOutput, rules, calibration, false, DEFAULT_DAMP, true);
            }
            if (bits != 2 && bits != 3 && bits != 4 && bits != 8) throw new IllegalArgumentException(method + ": bits must be 2, 3, 4 or 8, got " + bits);
            if (groupSize != PER_CHANNEL && groupSize != 32 && groupSize != 64 && groupSize != 128) {
                throw new IllegalArgumentException(method + ": group size must be 32, 64, 128 or -1 (per channel), got " + groupSize);
            }
            if (clipSearch && method.equals("awq")) {
                throw new IllegalArgumentException("clip search is an RTN and GPTQ option; awq searches its clipping on the calibration activations");
            }
            boolean gptq = method.contains("gptq");
            if (actOrder && !gptq) throw new IllegalArgumentException("act-order is a GPTQ option, not one of " + method);
            if (!(damp > 0) || !Double.isFinite(damp)) throw new IllegalArgumentException("damp must be positive (a fraction of the Hessian's mean diagonal, e.g. 0.01), got " + damp);
            if (damp != DEFAULT_DAMP && !gptq) throw new IllegalArgumentException("damp is a GPTQ option, not one of " + method);
            if (!duoScaling && !method.startsWith("awq")) throw new IllegalArgumentException("duo scaling is an AWQ option, not one of " + method);
            return new QuantizationSpec(method, bits, groupSize, symmetric, clipSearch, scaleType, keepEmbeddingAndOutput, rules, calibration, actOrder, damp, duoScaling);
        }
    }
}
