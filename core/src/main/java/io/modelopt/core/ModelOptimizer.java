package io.modelopt.core;

import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.ModelSources;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The entry point: {@code ModelOptimizer.load(path).quantize(AWQ).withKvCache(INT8).build()}.
 *
 * <p>{@link #load(Path)} maps a GGUF file or a Hugging Face directory (nothing is copied); the
 * returned object owns the mapping until {@link #close()}. The later steps of the chain arrive
 * with their modules (quantization, kvcache, engine), found through {@link java.util.ServiceLoader}.
 */
public final class ModelOptimizer implements AutoCloseable {
    private final ModelSource source;

    private ModelOptimizer(ModelSource source) {
        this.source = source;
    }

    /**
     * Opens a model: a {@code .gguf} file or a Hugging Face model directory
     * ({@code config.json}, {@code model.safetensors} or a sharded index, {@code tokenizer.json}).
     *
     * @throws ModelFormatException when the files are malformed or unsupported (the message names the file and the problem)
     * @throws UncheckedIOException when the files cannot be read
     */
    public static ModelOptimizer load(Path path) {
        try {
            return new ModelOptimizer(ModelSources.open(path));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read model " + path + ": " + e.getMessage(), e);
        }
    }

    /** Architecture, dims, every tensor (name, dtype, shape, bytes), totals and the tokenizer. */
    public ModelDescription describe() {
        return ModelDescription.of(source);
    }

    public ModelConfig config() { return source.config(); }

    public Tokenizer tokenizer() { return source.tokenizer(); }

    /** The loaded files, for tools that work on tensors directly. */
    public ModelSource source() { return source; }

    @Override public void close() {
        source.close();
    }
}
