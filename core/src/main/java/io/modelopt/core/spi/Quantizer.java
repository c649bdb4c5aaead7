package io.modelopt.core.spi;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.model.ModelSource;

/**
 * A weight quantizer, found by {@link io.modelopt.core.ModelOptimizer#quantize} through
 * {@link java.util.ServiceLoader} (register it in {@code module-info} and
 * {@code META-INF/services/io.modelopt.core.spi.Quantizer}). Core ships none; the quantization
 * module brings RTN and the GGUF types.
 */
public interface Quantizer {
    /** Whether this quantizer implements {@code spec}'s method. */
    boolean supports(QuantizationSpec spec);

    /**
     * Quantizes the source's weights into memory. The result is an in-memory model that owns its
     * memory (an arena) and needs nothing of {@code source} afterwards: the caller closes both.
     * The source stays open and unchanged.
     *
     * @throws IllegalArgumentException the spec cannot be applied to this model (a tensor that
     *         cannot take the requested format, an already-quantized input), naming the tensor
     */
    ModelSource quantize(ModelSource source, QuantizationSpec spec, ProgressListener progress);

    /**
     * What {@link #quantize} would do, one line per tensor (its target type), for
     * {@code describe()} and {@code inspect}, without quantizing anything.
     *
     * @throws IllegalArgumentException as {@link #quantize} would
     */
    default String plan(ModelSource source, QuantizationSpec spec) {
        return "(this quantizer does not describe its plan)";
    }
}
