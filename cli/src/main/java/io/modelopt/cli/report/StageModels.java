package io.modelopt.cli.report;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.gguf.GgufQuantizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Makes each stage's model from the baseline file, and says which stages this build can make at
 * all. This is the one place that knows which module provides which stage: a stage that needs a
 * module not merged yet reports what it needs instead of a number.
 */
final class StageModels {
    /** What stages 2 and 3 (RTN) need; they appear once that work is merged. */
    static final String NEEDS_RTN = "needs core's QuantizationSpec with its RTN quantizer (ModelOptimizer.quantize(spec), in-memory INT8/INT4), "
            + "not in this build yet";
    static final String NEEDS_CALIBRATION = "needs calibrated quantization (AWQ/GPTQ: the calibration issue), not in this build yet";
    static final String NEEDS_KV8_ENGINE = "needs the INT8 KV cache (core's KvDtype has no Q8_0 yet) and the continuous-batching engine "
            + "with prefix caching (issue 19)";
    private static final Set<GgmlType> GGUF_QUANTIZABLE = EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16);

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

    /** Why this build cannot make {@code stage}, or null when it can. */
    String unavailable(Stage stage) {
        return switch (stage) {
            case BASELINE -> null;
            case INT8 -> NEEDS_RTN;
            case INT4 -> int4Unavailable();
            case INT4_KV8_ENGINE -> int8Kv().isEmpty() ? NEEDS_KV8_ENGINE : int4Unavailable();
        };
    }

    private String int4Unavailable() {
        return switch (method) {
            case RTN -> NEEDS_RTN;
            case AWQ, GPTQ, AWQ_GPTQ -> NEEDS_CALIBRATION;
            case Q4_K_M -> Files.isDirectory(model) || !GGUF_QUANTIZABLE.contains(baselineType)
                    ? "q4_k_m quantizes a GGUF file of F32, F16 or BF16 weights; " + model.getFileName() + " is "
                      + (Files.isDirectory(model) ? "an HF directory" : "a " + baselineType + " GGUF")
                    : null;
        };
    }

    /**
     * Opens {@code stage}'s model; the caller closes it. Quantizing stages report progress on
     * {@code progress}.
     *
     * @throws IllegalStateException the stage is not available here ({@link #unavailable})
     */
    StageModel open(Stage stage, ProgressListener progress) {
        String why = unavailable(stage);
        if (why != null) throw new IllegalStateException("stage " + stage.number() + " " + why);
        List<String> notes = new ArrayList<>();
        KvDtype kv = stage == Stage.INT4_KV8_ENGINE ? int8Kv().orElseThrow() : KvDtype.F16;
        if (stage == Stage.INT4 || stage == Stage.INT4_KV8_ENGINE) {
            if (calib != null && !method.calibrated()) notes.add("--calib is not used by " + method.key() + " (it needs no calibration)");
            if (method == Int4Method.RTN) notes.add("INT4 is round-to-nearest, group 128; AWQ arrives with the calibration issue");
        }
        if (stage == Stage.INT4_KV8_ENGINE) {
            notes.add("INT8 KV with requests served one at a time: the continuous-batching engine (issue 19) is not in this build");
        }
        return switch (stage) {
            case BASELINE -> new StageModel(openFile(model), kv, notes, null);
            case INT8 -> throw new IllegalStateException(NEEDS_RTN);
            case INT4, INT4_KV8_ENGINE -> switch (method) {
                case Q4_K_M -> ggufPreset("q4_k_m", kv, notes, progress);
                default -> throw new IllegalStateException(int4Unavailable());
            };
        };
    }

    /** A llama.cpp preset through the quantization module's GGUF quantizer, into a temporary file deleted with the stage. */
    private StageModel ggufPreset(String preset, KvDtype kv, List<String> notes, ProgressListener progress) {
        Path dir;
        try {
            dir = Files.createTempDirectory("modelopt-report-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary folder for the " + preset + " model: " + e.getMessage(), e);
        }
        Path file = dir.resolve("stage-" + preset + ".gguf");
        Runnable cleanup = () -> {
            try {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // a leftover temporary file is harmless and the next run does not read it
            }
        };
        try {
            GgufQuantizer q = GgufQuantizer.forPreset(preset);
            q.listener((what, done, total) -> progress.onProgress("quantizing (" + preset + ")", done, total));
            q.quantize(model, file);
            notes.add(preset + " quantized by the quantization module's GGUF quantizer (llama-quantize's tensor choices)");
            return new StageModel(openFile(file), kv, notes, cleanup);
        } catch (RuntimeException e) {
            cleanup.run();
            throw e;
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
