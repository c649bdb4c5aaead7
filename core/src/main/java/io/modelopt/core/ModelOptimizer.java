package io.modelopt.core;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ServiceLoader;
import io.modelopt.core.spi.Quantizer;

/**
 * The entry point: {@code ModelOptimizer.load(path).quantize(AWQ).withKvCache(INT8).build()}.
 *
 * <p>{@link #load(Path)} maps a GGUF file or a Hugging Face directory (nothing is copied); the
 * returned object owns the mapping until {@link #close()}. The later steps of the chain arrive
 * with their modules (quantization, kvcache, engine), found through {@link java.util.ServiceLoader}.
 */
public final class ModelOptimizer implements AutoCloseable {
    private final ModelSource source;
    private QuantizationMethod quantization;
    private final RunnerOptions.Builder options = RunnerOptions.builder();
    private String backend = "cpu";
    private ProgressListener progress = ProgressListener.NONE;
    private boolean built;

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

    /**
     * Quantizes the weights with {@code method} when {@link #build()} runs. Quantizers come from
     * the quantization module through {@link ServiceLoader}; without one for {@code method} this
     * fails at once with a message saying which module is needed.
     */
    public ModelOptimizer quantize(QuantizationMethod method) {
        findQuantizer(method);
        this.quantization = method;
        return this;
    }

    /** The element type of the KV cache (F16 by default, as llama.cpp). */
    public ModelOptimizer withKvCache(KvDtype dtype) {
        options.kvDtype(dtype);
        return this;
    }

    /** Worker threads of the compute pool (default: all available processors). */
    public ModelOptimizer withThreads(int threads) {
        options.threads(threads);
        return this;
    }

    /** Positions a sequence may use (default: the model's trained context length). */
    public ModelOptimizer withContextLength(int contextLength) {
        options.contextLength(contextLength);
        return this;
    }

    /** The backend to run on, by name ("cpu" by default; "cuda" with the cuda-bindings module). */
    public ModelOptimizer withBackend(String name) {
        this.backend = name;
        return this;
    }

    /** Receives progress of quantization and loading. */
    public ModelOptimizer withProgress(ProgressListener listener) {
        this.progress = listener == null ? ProgressListener.NONE : listener;
        return this;
    }

    /**
     * Applies the chosen steps and binds the model to the backend. The returned model owns the
     * files from here on: close it, not this object (closing this one afterwards does nothing).
     */
    public OptimizedModel build() {
        if (built) throw new IllegalStateException("build() was already called on this ModelOptimizer");
        ModelSource model = source;
        if (quantization != null) model = findQuantizer(quantization).quantize(source, quantization, progress);
        Backend b = Backend.named(backend);
        if (!b.isAvailable()) throw new IllegalStateException("backend '" + backend + "' is not available on this machine");
        ModelRunner runner = b.load(model, options.build());
        built = true;
        if (model != source) source.close();
        return new OptimizedModel(model, runner);
    }

    private static Quantizer findQuantizer(QuantizationMethod method) {
        for (Quantizer q : ServiceLoader.load(Quantizer.class)) {
            if (q.supports(method)) return q;
        }
        throw new IllegalStateException("quantize(" + method + ") needs a quantizer for " + method
                + ": add the io.modelopt:modelopt-quantization module to the class path (no registered Quantizer supports it)");
    }

    @Override public void close() {
        if (!built) source.close();
    }
}
