package io.modelopt.core;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.MemoryProbe;
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
 * The entry point: {@code ModelOptimizer.load(path).quantize(RTN_INT4).withKvCache(INT8).build()}.
 *
 * <p>{@link #load(Path)} maps a GGUF file or a Hugging Face directory (nothing is copied); the
 * returned object owns the mapping until {@link #close()}. The later steps of the chain arrive
 * with their modules (quantization, kvcache, engine), found through {@link java.util.ServiceLoader}.
 */
public final class ModelOptimizer implements AutoCloseable {
    private final ModelSource source;
    private QuantizationSpec quantization;
    private Quantizer quantizer;
    private final RunnerOptions.Builder options = RunnerOptions.builder();
    private String backend = "cpu";
    private ProgressListener progress = ProgressListener.NONE;
    private boolean built;
    private KvBudget kvBudget;
    private int kvBlockSize = 16;

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
     * Quantizes the weights as {@code spec} says when {@link #build()} runs (the result lives in
     * memory; {@link OptimizedModel#export} writes it). Quantizers come from the quantization
     * module through {@link ServiceLoader}; without one for the spec's method this fails at once,
     * saying which module is needed.
     *
     * @throws IllegalStateException no registered quantizer supports the method
     */
    public ModelOptimizer quantize(QuantizationSpec spec) {
        this.quantizer = findQuantizer(spec);
        this.quantization = spec;
        return this;
    }

    /**
     * The quantizer's plan for the spec given to {@link #quantize}: each tensor's target type and
     * the bits per weight it would give (nothing is quantized).
     *
     * @throws IllegalStateException {@link #quantize} was not called
     */
    public String quantizationPlan() {
        if (quantization == null) throw new IllegalStateException("quantize(spec) was not called");
        return quantizer.plan(source, quantization);
    }

    /**
     * Quantizes now and returns the in-memory quantized model, without binding it to a backend
     * (for export alone: {@code ModelExporter}). The caller owns and closes it; this object
     * still owns the input.
     */
    public ModelSource quantizeToSource() {
        if (quantization == null) throw new IllegalStateException("quantize(spec) was not called");
        return quantizer.quantize(source, quantization, progress);
    }

    /** The element type of the KV cache (F16 by default, as llama.cpp). */
    public ModelOptimizer withKvCache(KvDtype dtype) {
        options.kvDtype(dtype);
        return this;
    }

    /**
     * Caps the KV cache at {@code budget} ({@link KvBudget#parse}: {@code 512MiB}, or {@code 0.3} of
     * the memory still usable after the weights). {@link #build()} turns it into a number of
     * blocks of {@link #withKvBlockSize block size} tokens ({@link OptimizedModel#kvPlan()}) and
     * fails if one sequence of the context length does not fit.
     */
    public ModelOptimizer withKvBudget(KvBudget budget) {
        this.kvBudget = java.util.Objects.requireNonNull(budget, "budget");
        return this;
    }

    /** {@link #withKvBudget(KvBudget)} of {@link KvBudget#parse}{@code (budget)}. */
    public ModelOptimizer withKvBudget(String budget) { return withKvBudget(KvBudget.parse(budget)); }

    /** Tokens per KV block for the budget's plan: a power of two from 8 to 256 (16 by default). */
    public ModelOptimizer withKvBlockSize(int blockSize) {
        if (blockSize < 8 || blockSize > 256 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("KV block size " + blockSize + " must be a power of two from 8 to 256");
        }
        this.kvBlockSize = blockSize;
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
        Backend b = Backend.named(backend);
        if (!b.isAvailable()) throw new IllegalStateException("backend '" + backend + "' is not available on this machine");
        RunnerOptions runnerOptions = options.build();
        if (!b.kvDtypes().contains(runnerOptions.kvDtype())) {
            throw new IllegalArgumentException("backend '" + backend + "' cannot store a " + runnerOptions.kvDtype() + " KV cache; it supports " + b.kvDtypes());
        }
        if (quantization != null) model = quantizer.quantize(source, quantization, progress);
        ModelRunner runner;
        try {
            runner = b.load(model, runnerOptions);
        } catch (RuntimeException e) {
            if (model != source) model.close();
            throw e;
        }
        KvBudget.Plan plan = null;
        if (kvBudget != null) {
            try {
                ModelConfig c = runner.config();
                plan = kvBudget.plan(c.numLayers(), c.numKvHeads(), c.headDim(), runner.options().kvDtype(), kvBlockSize, runner.contextLength(), MemoryProbe.system());
            } catch (RuntimeException e) {
                runner.close();
                if (model != source) model.close();
                throw e;
            }
        }
        built = true;
        // The quantized model needs nothing of the input (the Quantizer contract): release the mapping now.
        if (model != source) source.close();
        return new OptimizedModel(model, runner, progress, plan);
    }

    /**
     * The registered quantizer for {@code spec} (for tools that quantize a source they opened themselves).
     *
     * @throws IllegalStateException naming the method and the module to add when none supports it
     */
    public static Quantizer quantizer(QuantizationSpec spec) {
        return findQuantizer(spec);
    }

    private static Quantizer findQuantizer(QuantizationSpec spec) {
        for (Quantizer q : ServiceLoader.load(Quantizer.class)) {
            if (q.supports(spec)) return q;
        }
        String module = spec.method().equals("awq") || spec.method().equals("gptq")
                ? "the io.modelopt:modelopt-quantization module with its calibrated quantizers"
                : "the io.modelopt:modelopt-quantization module";
        throw new IllegalStateException("quantize(" + spec.method() + ") needs a quantizer for method '" + spec.method()
                + "': add " + module + " to the class path (no registered Quantizer supports it)");
    }

    @Override public void close() {
        if (!built) source.close();
    }
}
