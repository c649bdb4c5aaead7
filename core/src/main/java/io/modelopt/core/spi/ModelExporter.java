package io.modelopt.core.spi;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.model.ModelSource;
import java.nio.file.Path;

/**
 * Writes a (quantized) model in another tool's format, found by
 * {@link io.modelopt.core.OptimizedModel#export} through {@link java.util.ServiceLoader} by its
 * {@link #format()} name: {@code "gguf"} (llama.cpp), {@code "awq"} (AutoAWQ GEMM),
 * {@code "gptq"} (AutoGPTQ/GPTQModel v1), {@code "compressed-tensors"} (llm-compressor).
 * Register it in {@code module-info} and {@code META-INF/services/io.modelopt.core.spi.ModelExporter}.
 */
public interface ModelExporter {
    /** The format name, lower case, as {@code --format} takes it. */
    String format();

    /**
     * Writes {@code quantized} to {@code out} (a file or a directory, as the format has it): to a
     * temporary name beside it, moved into place when complete, replacing what was there.
     *
     * @throws IllegalArgumentException this format cannot hold one of the model's weight formats
     *         (the message names that tensor and format, and the export formats that can hold it)
     * @throws java.io.UncheckedIOException the output cannot be written
     */
    void export(ModelSource quantized, Path out, ProgressListener progress);
}
