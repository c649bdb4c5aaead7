package io.modelopt.quantization.calib;

/**
 * A statistic of one linear input accumulated over the calibration set (GPTQ's {@code XᵀX}, AWQ's
 * mean {@code |x|}, llama-imatrix's sum of squares): fed batch by batch with the activation rows
 * the {@link io.modelopt.core.engine.ActivationObserver} sees.
 */
@FunctionalInterface
public interface InputStatistics {
    /**
     * @param rows   row-major activations, token {@code t} at {@code rows[t·cols .. (t+1)·cols)}; the
     *               runner's buffer: read it during the call only
     * @param tokens rows in use
     * @param cols   floats per row
     */
    void accept(float[] rows, int tokens, int cols);

    /** Bytes this statistic holds (for the peak-memory report); 0 when unknown. */
    default long bytes() { return 0; }
}
