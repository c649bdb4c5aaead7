package io.modelopt.core.spi;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationMethod;
import io.modelopt.core.model.ModelSource;

/**
 * A weight quantizer, found by {@link io.modelopt.core.ModelOptimizer#quantize} through
 * {@link java.util.ServiceLoader} (register it in {@code module-info} and
 * {@code META-INF/services/io.modelopt.core.spi.Quantizer}). Core ships none.
 */
public interface Quantizer {
    /** Whether this quantizer implements {@code method}. */
    boolean supports(QuantizationMethod method);

    /**
     * Quantizes the source's weights; the result owns its memory and is closed by the caller.
     * The source stays open and unchanged.
     */
    ModelSource quantize(ModelSource source, QuantizationMethod method, ProgressListener progress);
}
