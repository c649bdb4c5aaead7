package io.modelopt.cli.report;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.Quantizer;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.policy.LayerPolicy;
import io.modelopt.quantization.policy.QuantizationPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Makes each stage's model from the baseline file, and says which stages this build can make at
 * all. This is the one place that knows which module provides which stage: quantized stages go
 * through {@link ModelOptimizer#quantize} with a {@link QuantizationSpec}, and a stage whose
 * quantizer (a {@link Quantizer} found through {@link ServiceLoader}) or KV dtype is not in this
 * build reports what it needs instead of a number.
 */
final class StageModels implements AutoCloseable {
    /** Calibration defaults of the issue: 16 sequences of 256 tokens. */
    static final int CALIB_SAMPLES = 16, CALIB_TOKENS = 256;
    static final long CALIB_SEED = 1234;

    private final Path model;
    private final Int4Method method;
    private final boolean methodDefaulted;
    private final int bits, groupSize;
    /** AWQ's scale rule (awq, awq+gptq): duo scaling, or the paper's x̄^α when false. */
    private final boolean duoScaling;
    private final Path calib;
    private final int calibSamples, calibTokens;
    private final GgmlType baselineType;
    private final boolean reuseInt4;
    /** Stage 3's quantized model, kept for stage 4 (same weights: quantized and calibrated once). */
    private ModelSource int4;

    /**
     * @param model        the baseline model file or directory
     * @param baselineType the type that holds most of its linear weights
     * @param method       stage 3's method; null: {@link #defaultMethod()}
     * @param reuseInt4    stage 3 and 4 both run: keep stage 3's model for stage 4
     */
    StageModels(Path model, GgmlType baselineType, Int4Method method, int bits, int groupSize, boolean duoScaling, Path calib, int calibSamples,
                int calibTokens, boolean reuseInt4) {
        this.model = model;
        this.baselineType = baselineType;
        this.methodDefaulted = method == null;
        this.method = method == null ? defaultMethod() : method;
        this.bits = bits;
        this.groupSize = groupSize;
        this.duoScaling = duoScaling;
        this.calib = calib;
        this.calibSamples = calibSamples;
        this.calibTokens = calibTokens;
        this.reuseInt4 = reuseInt4;
    }

    /**
     * Stage 3's method when {@code --method} is not given: AWQ (the INT4 AWQ of the comparison the
     * report exists for), when a registered quantizer implements it; else GPTQ; else RTN.
     */
    static Int4Method defaultMethod() {
        if (quantizerFor(QuantizationSpec.awq().build()).isPresent()) return Int4Method.AWQ;
        if (quantizerFor(QuantizationSpec.gptq().build()).isPresent()) return Int4Method.GPTQ;
        return Int4Method.RTN;
    }

    Int4Method method() { return method; }

    /** The type holding most bytes of the 2-D tensors (the linear weights): what "baseline" means for this file. */
    static GgmlType dominantType(Map<String, TensorData> tensors) {
        Map<GgmlType, Long> bytes = new java.util.EnumMap<>(GgmlType.class);
        for (TensorData t : tensors.values()) if (t.shape().length >= 2) bytes.merge(t.type(), t.byteSize(), Long::sum);
        return bytes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(GgmlType.F32);
    }

    /** What the stage runs, in words ("sequential": requests served one at a time). */
    String configuration(Stage stage) {
        String t = baselineType.name().toUpperCase(Locale.ROOT);
        return switch (stage) {
            case BASELINE -> t + " weights, F16 KV, sequential";
            case INT8 -> "INT8 RTN per-channel, F16 KV, sequential";
            case INT4 -> int4Label() + ", F16 KV, sequential";
            case INT4_KV8_ENGINE -> int4Label() + ", INT8 KV, engine (8 concurrent, prefix caching)";
        };
    }

    private String int4Label() {
        if (method == Int4Method.Q4_K_M) return method.label();
        return method.label().replace("INT4", "INT" + bits).replace("g128", groupSize == QuantizationSpec.PER_CHANNEL ? "per-channel" : "g" + groupSize);
    }

    /** The spec a quantized stage asks for, without calibration data (see {@link #open}); null for the baseline. */
    QuantizationSpec spec(Stage stage) {
        return switch (stage) {
            case BASELINE -> null;
            case INT8 -> QuantizationSpec.RTN_INT8;
            case INT4, INT4_KV8_ENGINE -> switch (method) {
                case RTN -> QuantizationSpec.int4().bits(bits).groupSize(groupSize).build();
                case Q4_K_M -> QuantizationSpec.gguf("q4_k_m").build();
                case AWQ -> QuantizationSpec.awq().bits(bits).groupSize(groupSize).duoScaling(duoScaling).build();
                case GPTQ -> QuantizationSpec.gptq().bits(bits).groupSize(groupSize).build();
                case AWQ_GPTQ -> QuantizationSpec.awqGptq().bits(bits).groupSize(groupSize).duoScaling(duoScaling).build();
            };
        };
    }

    /** Why this build cannot make {@code stage}, or null when it can. */
    String unavailable(Stage stage) {
        QuantizationSpec spec = spec(stage);
        if (spec == null || quantizerFor(spec).isPresent()) return null;
        return "needs a quantizer for method '" + spec.method() + "'; none is registered in this build (" + registeredMethods() + ")";
    }

    private static String registeredMethods() {
        List<String> names = new ArrayList<>();
        for (Quantizer q : ServiceLoader.load(Quantizer.class)) names.add(q.getClass().getSimpleName());
        return names.isEmpty() ? "no quantizers at all" : "registered: " + String.join(", ", names);
    }

    /**
     * Checks before anything is measured that every chosen quantized stage's spec fits {@code
     * base}, so a bad --bits or --group-size fails in a second, not after the baseline's minutes.
     * The layer policy stores a linear weight whose rows a group size does not divide as INT8
     * (or keeps it); that is right for a default on an odd model, but when the user asked for
     * the bits or group size ({@code strict}), a stage that silently ran something else would
     * misreport, so it is an error naming the tensor and the group sizes that would fit.
     *
     * @throws IllegalArgumentException naming the stage, the tensor and the numbers
     */
    void check(ModelSource base, List<Stage> stages, boolean strict) {
        for (Stage s : stages) {
            QuantizationSpec spec = spec(s);
            if (spec == null || unavailable(s) != null) continue;
            try {
                quantizerFor(spec).orElseThrow().plan(base, spec);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("stage " + s.number() + " (" + configuration(s) + "): " + e.getMessage(), e);
            }
            if (!strict || s == Stage.INT8 || method == Int4Method.Q4_K_M) continue;
            List<QuantizationPlan.Entry> misfits = misfits(base, spec);
            if (misfits.isEmpty()) continue;
            List<String> fit = new ArrayList<>();
            for (int g : new int[] {32, 64, 128, QuantizationSpec.PER_CHANNEL}) {
                if (misfits(base, spec.toBuilder().groupSize(g).build()).isEmpty()) fit.add(g == QuantizationSpec.PER_CHANNEL ? "-1 (per channel)" : Integer.toString(g));
            }
            QuantizationPlan.Entry first = misfits.getFirst();
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "stage %d: --bits %d --group-size %d do not fit this model: %d linear weights would not be stored so, e.g. %s (%d columns: %s); %s",
                    s.number(), bits, groupSize, misfits.size(), first.name(), first.cols(), first.reason(),
                    fit.isEmpty() ? "no group size fits every weight at " + bits + " bits" : "group sizes that fit at " + bits + " bits: " + String.join(", ", fit)));
        }
    }

    /** Block linears the policy does not store as {@code spec} asks (fallback to INT8 or kept). */
    private static List<QuantizationPlan.Entry> misfits(ModelSource base, QuantizationSpec spec) {
        return LayerPolicy.plan(base, spec).entries().stream().filter(e -> e.isBlockLinear() && e.reason().startsWith("fallback")).toList();
    }

    private static Optional<Quantizer> quantizerFor(QuantizationSpec spec) {
        for (Quantizer q : ServiceLoader.load(Quantizer.class)) if (q.supports(spec)) return Optional.of(q);
        return Optional.empty();
    }

    /**
     * Opens {@code stage}'s model; the caller closes it. Quantizing stages report progress on
     * {@code progress}; the quantized model is in memory and needs nothing of the file. Stage 4
     * gets stage 3's model when both run (kept by this object, closed with it).
     *
     * @throws IllegalStateException the stage is not available here ({@link #unavailable})
     * @throws IllegalArgumentException the quantizer cannot apply the spec to this model (naming the tensor)
     */
    StageModel open(Stage stage, ProgressListener progress) {
        String why = unavailable(stage);
        if (why != null) throw new IllegalStateException("stage " + stage.number() + " " + why);
        KvDtype kv = stage == Stage.INT4_KV8_ENGINE ? KvDtype.INT8 : KvDtype.F16;
        QuantizationSpec spec = spec(stage);
        if (spec == null) return new StageModel(openFile(model), kv, List.of(), true);
        if (stage == Stage.INT8) return new StageModel(quantize(spec, progress), kv, List.of(), true);
        if (int4 != null) return new StageModel(int4, kv, List.of("the weights of stage 3 (quantized once, see its notes)"), false);
        List<String> notes = new ArrayList<>();
        if (methodDefaulted && method != Int4Method.AWQ) {
            notes.add("AWQ has no quantizer in this build, so stage 3 uses " + method.key() + " (the first available of awq, gptq, rtn)");
        }
        if (calib != null && !method.calibrated()) notes.add("--calib is not used by " + method.key() + " (it needs no calibration)");
        Path tokens = null;
        String described = spec.toString();
        try {
            if (method.calibrated()) {
                Path files;
                if (calib != null) {
                    files = calib;
                    notes.add(String.format(Locale.ROOT, "calibrated on %d x %d tokens of %s (seed %d)", calibSamples, calibTokens, calib.getFileName(), CALIB_SEED));
                } else {
                    tokens = SyntheticCalibration.write(openConfig(), calibSamples, calibTokens, CALIB_SEED);
                    files = tokens;
                    notes.add(String.format(Locale.ROOT, "calibrated on %d x %d uniformly random token ids (seed %d): no --calib given", calibSamples,
                            calibTokens, CALIB_SEED));
                }
                spec = spec.toBuilder().calibration(new QuantizationSpec.CalibrationSpec(List.of(files), calibSamples, calibTokens, CALIB_SEED)).build();
            }
            ModelSource quantized = quantize(spec, progress);
            notes.add("quantized as " + described);
            if (!reuseInt4) return new StageModel(quantized, kv, notes, true);
            int4 = quantized;
            return new StageModel(int4, kv, notes, false);
        } finally {
            SyntheticCalibration.delete(tokens);
        }
    }

    private io.modelopt.core.model.ModelConfig openConfig() {
        try (ModelSource s = openFile(model)) {
            return s.config();
        }
    }

    private ModelSource quantize(QuantizationSpec spec, ProgressListener progress) {
        // the quantized model owns its memory; the input's mapping is released as soon as it is made
        try (ModelOptimizer input = ModelOptimizer.load(model).withProgress(progress)) {
            return input.quantize(spec).quantizeToSource();
        }
    }

    static ModelSource openFile(Path path) {
        try {
            return ModelSources.open(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read model " + path + ": " + e.getMessage(), e);
        }
    }

    @Override public void close() {
        if (int4 != null) int4.close();
        int4 = null;
    }
}
