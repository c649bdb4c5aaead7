package io.modelopt.quantization.calib;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.Quantizer;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.model.QuantizedModelSource;
import io.modelopt.quantization.model.RtnModelQuantizer;
import io.modelopt.quantization.policy.LayerPolicy;
import io.modelopt.quantization.policy.QuantizationPlan;
import io.modelopt.quantization.policy.TargetFormat;
import java.lang.foreign.Arena;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The {@link Quantizer} of a calibrated method: plans the model with the {@link LayerPolicy},
 * draws the calibration set ({@link CalibrationData}), runs {@link BlockwiseCalibrator} with the
 * subclass's {@link BlockMethod} on a CPU runner of the float model, and assembles the in-memory
 * model (tensors the method did not produce, such as embeddings and an INT8 fallback, as
 * {@link RtnModelQuantizer} makes them). The calibration record goes into the metadata as
 * {@value #CALIBRATION_KEY}.
 */
public abstract class CalibratedModelQuantizer implements Quantizer {
    /** Metadata key of the calibration record's summary. */
    public static final String CALIBRATION_KEY = "modelopt.calibration";
    /** The same record's key inside a Hugging Face checkpoint's {@code quantization_config} (other readers ignore it). */
    public static final String HF_CALIBRATION_KEY = "modelopt_calibration";

    /**
     * What a calibrated model was calibrated on, from its metadata: {@link #CALIBRATION_KEY} (a model
     * quantized in memory, a GGUF) or {@code quantization_config.}{@link #HF_CALIBRATION_KEY} (a
     * Hugging Face checkpoint); empty for other models.
     */
    public static java.util.Optional<String> calibrationRecord(Map<String, Object> metadata) {
        if (metadata == null) return java.util.Optional.empty();
        Object c = metadata.get(CALIBRATION_KEY);
        if (c == null && metadata.get("quantization_config") instanceof Map<?, ?> qc) c = qc.get(HF_CALIBRATION_KEY);
        return c == null ? java.util.Optional.empty() : java.util.Optional.of(c.toString());
    }
    /** Tokens per calibration batch (whole sequences; at least one). */
    static final int BATCH_TOKENS = 2048;

    /** The method names this quantizer implements. */
    protected abstract Set<String> methods();

    /** The per-block method for {@code spec}, computing on {@code pool}. */
    protected abstract BlockMethod blockMethod(QuantizationSpec spec, ComputePool pool);

    @Override public boolean supports(QuantizationSpec spec) { return methods().contains(spec.method()); }

    @Override public String plan(ModelSource source, QuantizationSpec spec) { return LayerPolicy.plan(source, spec).toString(); }

    @Override public QuantizedModelSource quantize(ModelSource source, QuantizationSpec spec, ProgressListener progress) {
        if (!supports(spec)) throw new IllegalArgumentException(getClass().getSimpleName() + " does not implement method '" + spec.method() + "'");
        if (spec.calibration() == null) {
            throw new IllegalArgumentException(spec.method() + " needs calibration data: give text files (--calib FILE, or QuantizationSpec.Builder.calibration)");
        }
        QuantizationPlan plan = LayerPolicy.plan(source, spec);
        Map<String, IntScheme> schemes = new HashMap<>();
        for (QuantizationPlan.Entry e : plan.entries()) {
            if (e.isBlockLinear() && e.target() instanceof TargetFormat.Int it) schemes.put(e.name(), it.scheme());
        }
        int context = source.config().contextLength() > 0 ? source.config().contextLength() : Integer.MAX_VALUE;
        CalibrationData data = CalibrationData.load(spec.calibration(), source.tokenizer(), context);
        int len = data.sequenceLength();
        int perBatch = Math.max(1, Math.min(data.size(), BATCH_TOKENS / len));
        int threads = Runtime.getRuntime().availableProcessors();
        Arena arena = Arena.ofShared();
        // The CPU backend: the AWQ and GPTQ solvers run on this compute pool beside the block forwards, and
        // the quantizer SPI takes no backend (a GPU backend would need its own block methods too).
        try (ComputePool pool = new ComputePool(threads);
             ModelRunner runner = Backend.named("cpu").load(source, RunnerOptions.builder().threads(threads).computePool(pool)
                     .maxBatchTokens(perBatch * len).maxLogitsRows(1).maxSequences(perBatch).contextLength(len).build())) {
            BlockwiseCalibrator.Result r = new BlockwiseCalibrator(source, runner, data, schemes::get, arena, progress, perBatch)
                    .run(blockMethod(spec, pool));
            Map<String, Object> meta = new LinkedHashMap<>();
            meta.put(CALIBRATION_KEY, data.record().summary());
            return RtnModelQuantizer.assemble(source, spec, plan, progress, arena, r.quantized(), r.floatTensors(), meta);
        } catch (RuntimeException | Error e) {
            if (arena.scope().isAlive()) arena.close();
            throw e;
        }
    }
}
