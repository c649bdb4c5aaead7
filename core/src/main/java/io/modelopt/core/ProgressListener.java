package io.modelopt.core;

/**
 * Receives progress of long work (loading, calibration, quantization, evaluation). Called from
 * the working thread; implementations must be quick. The CLI draws a progress line from it.
 */
@FunctionalInterface
public interface ProgressListener {
    /**
     * @param stage what is being done ("perplexity", "quantize blk.3", ...)
     * @param done  units finished so far
     * @param total total units, or -1 when unknown
     */
    void onProgress(String stage, long done, long total);

    /** A listener that ignores everything. */
    ProgressListener NONE = (stage, done, total) -> {};
}
