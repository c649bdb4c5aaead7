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
final class StageModels {
    static final String NEEDS_CALIBRATION = "needs a calibrated quantizer (AWQ/GPTQ: the calibration issue); none is registered in this build";
    static final String NEEDS_KV8_ENGINE = "needs the INT8 KV cache (core's KvDtype has no Q8_0 yet) and the continuous-batching engine "
            + "with prefix caching (issue 19)";
    /** Calibration defaults of the issue: 16 sequences of 256 tokens. */
    static final int CALIB_SAMPLES = 16, CALIB_TOKENS = 256;
    static final long CALIB_SEED = 1234;

    private final Path model;
    private final Int4Method method;
    private final Path calib;
    private final GgmlType baselineType;

    /**
     * @param model        the baseline model file or directory
     * @param baselineType the type that holds most of its linear weights
     */
    StageModels(Path model, GgmlType baselineType, Int4Method method, Path calib) {
        this.model = model;
        this.baselineType = baselineType;
        this.method = method;
        this.calib = calib;
    }

    /** The type holding most bytes of the 2-D tensors (the linear weights): what "baseline" means for this file. */
    static GgmlType dominantType(Map<String, TensorData> tensors) {
        Map<GgmlType, Long> bytes = new java.util.EnumMap<>(GgmlType.class);
        for (TensorData t : tensors.values()) if (t.shape().length >= 2) bytes.merge(t.type(), t.byteSize(), Long::sum);
        return bytes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(GgmlType.F32);
    }

    /** The INT8 KV dtype, once the KV cache module adds it to core's {@link KvDtype}. */
    static Optional<KvDtype> int8Kv() {
        return Arrays.stream(KvDtype.values()).filter(d -> d.name().equals("Q8_0") || d.name().equals("INT8")).findFirst();
    }

    /** What the stage runs, in words ("sequential": requests served one at a time). */
    String configuration(Stage stage) {
        String t = baselineType.name().toUpperCase(Locale.ROOT);
        return switch (stage) {
            case BASELINE -> t + " weights, F16 KV, sequential";
            case INT8 -> "INT8 RTN per-channel, F16 KV, sequential";
            case INT4 -> int4Label() + ", F16 KV, sequential";
            case INT4_KV8_ENGINE -> int8Kv().isPresent()
                    ? int4Label() + ", INT8 KV, sequential (no engine yet)"
                    : "INT4 + INT8 KV + continuous batching, prefix caching";
        };
    }

    /** RTN says it is RTN: the AWQ the issue asks for arrives with calibration, and the table must not claim it. */
    private String int4Label() {
        return method == Int4Method.RTN ? "INT4 RTN g128 (not AWQ yet)" : method.label();
    }

    /** The spec a quantized stage asks for; null for the baseline. */
    QuantizationSpec spec(Stage stage) {
        return switch (stage) {
            case BASELINE -> null;
            case INT8 -> QuantizationSpec.RTN_INT8;
            case INT4, INT4_KV8_ENGINE -> switch (method) {
                case RTN -> QuantizationSpec.RTN_INT4;
                case Q4_K_M -> QuantizationSpec.gguf("q4_k_m").build();
                case AWQ -> calibrated(QuantizationSpec.awq());
                case GPTQ -> calibrated(QuantizationSpec.gptq());
                // core's QuantizationSpec has no combined method yet: unavailable() says so before asking here
                case AWQ_GPTQ -> throw new IllegalStateException("no QuantizationSpec for awq+gptq yet");
            };
        };
    }

    private QuantizationSpec calibrated(QuantizationSpec.Builder b) {
        if (calib != null) b.calibration(new QuantizationSpec.CalibrationSpec(List.of(calib), CALIB_SAMPLES, CALIB_TOKENS, CALIB_SEED));
        return b.build();
    }

    /** Why this build cannot make {@code stage}, or null when it can. */
    String unavailable(Stage stage) {
        if (stage == Stage.INT4_KV8_ENGINE && int8Kv().isEmpty()) return NEEDS_KV8_ENGINE;
        boolean int4 = stage == Stage.INT4 || stage == Stage.INT4_KV8_ENGINE;
        if (int4 && method == Int4Method.AWQ_GPTQ) return NEEDS_CALIBRATION.replace("(AWQ/GPTQ", "(AWQ scales then GPTQ");
        QuantizationSpec spec = spec(stage);
        if (spec == null || quantizerFor(spec).isPresent()) return null;
        if (int4 && method.calibrated()) return NEEDS_CALIBRATION;
        return "needs a quantizer for method '" + spec.method() + "' (the quantization module's RTN quantizer); none is registered in this build";
    }

    private static Optional<Quantizer> quantizerFor(QuantizationSpec spec) {
        for (Quantizer q : ServiceLoader.load(Quantizer.class)) if (q.supports(spec)) return Optional.of(q);
        return Optional.empty();
    }

    /**
     * Opens {@code stage}'s model; the caller closes it. Quantizing stages report progress on
     * {@code progress}; the quantized model is in memory and needs nothing of the file.
     *
     * @throws IllegalStateException the stage is not available here ({@link #unavailable})
     * @throws IllegalArgumentException the quantizer cannot apply the spec to this model (naming the tensor)
     */
    StageModel open(Stage stage, ProgressListener progress) {
        String why = unavailable(stage);
        if (why != null) throw new IllegalStateException("stage " + stage.number() + " " + why);
        List<String> notes = new ArrayList<>();
        KvDtype kv = stage == Stage.INT4_KV8_ENGINE ? int8Kv().orElseThrow() : KvDtype.F16;
        if (stage == Stage.INT4 || stage == Stage.INT4_KV8_ENGINE) {
            if (calib != null && !method.calibrated()) notes.add("--calib is not used by " + method.key() + " (it needs no calibration)");
            if (method == Int4Method.RTN) notes.add("INT4 is round-to-nearest, group 128, asymmetric; AWQ arrives with the calibration issue");
        }
        if (stage == Stage.INT4_KV8_ENGINE) {
            notes.add("INT8 KV with requests served one at a time: the continuous-batching engine (issue 19) is not in this build");
        }
        QuantizationSpec spec = spec(stage);
        if (spec == null) return new StageModel(openFile(model), kv, notes, null);
        // the quantized model owns its memory; the input's mapping is released as soon as it is made
        try (ModelOptimizer input = ModelOptimizer.load(model).withProgress(progress)) {
            ModelSource quantized = input.quantize(spec).quantizeToSource();
            if (stage != Stage.INT8) notes.add("quantized as " + spec);
            return new StageModel(quantized, kv, notes, null);
        }
    }

    static ModelSource openFile(Path path) {
        try {
            return ModelSources.open(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read model " + path + ": " + e.getMessage(), e);
        }
    }
}
