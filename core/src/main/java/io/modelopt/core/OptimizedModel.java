package io.modelopt.core;

import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.GenerationResult;
import io.modelopt.core.generate.Generator;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.ModelExporter;
import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;

/**
 * What {@link ModelOptimizer#build()} returns: a model bound to a backend, ready to generate and
 * to be measured. Owns its runner and the model files; {@link #close()} releases both (threads,
 * buffers, mappings). {@link #generate} may be called from several threads; {@link #perplexity}
 * and direct use of {@link #runner()} one call at a time, and not while the engine runs.
 */
public final class OptimizedModel implements AutoCloseable {
    private final ModelSource source;
    private final ModelRunner runner;
    private final Generator generator;
    private final ProgressListener progress;

    private final io.modelopt.core.kv.KvBudget.Plan kvPlan;
    private io.modelopt.core.spi.ServingEngine engine;
    private boolean noEngine;

    OptimizedModel(ModelSource source, ModelRunner runner, ProgressListener progress, io.modelopt.core.kv.KvBudget.Plan kvPlan) {
        this.kvPlan = kvPlan;
        this.source = source;
        this.runner = runner;
        this.progress = progress;
        this.generator = new Generator(runner, source.tokenizer());
    }

    /**
     * Generates a continuation of {@code prompt}; tokens and text stream to {@code listener} (may be null).
     * With the scheduler module present this goes through {@link #engine()} (started on first use),
     * so calls from several threads share its steps; without it, the single-sequence
     * {@link Generator} runs it, one call at a time.
     */
    public GenerationResult generate(String prompt, GenerationOptions options, TokenListener listener) {
        TokenListener l = listener == null ? TokenListener.NONE : listener;
        io.modelopt.core.spi.ServingEngine e = engineIfRegistered();
        if (e != null) return e.generate(prompt, options, l);
        synchronized (generator) {
            return generator.generate(prompt, options, l);
        }
    }

    /** Greedy generation of at most {@code maxTokens} tokens. */
    public String generate(String prompt, int maxTokens) {
        return generate(prompt, GenerationOptions.builder().maxTokens(maxTokens).build(), null).text();
    }

    /** Perplexity of {@code text} (tokenized as one string) under {@code protocol}. */
    public Perplexity.Result perplexity(String text, WindowProtocol protocol, ProgressListener progress) {
        return Perplexity.evaluate(runner, tokenizer().encode(text), protocol, progress);
    }

    public ModelConfig config() { return runner.config(); }

    public Tokenizer tokenizer() { return source.tokenizer(); }

    /** The runner, for callers that build their own batches ({@code forward(Batch, KvCache)}). */
    public ModelRunner runner() { return runner; }

    /** The KV budget resolved to blocks ({@code withKvBudget}), if one was given. */
    public java.util.Optional<io.modelopt.core.kv.KvBudget.Plan> kvPlan() { return java.util.Optional.ofNullable(kvPlan); }

    /** The KV cache this model runs with: dtype, bytes per token (scales included) and, with a budget, its blocks. */
    public String kvSummary() {
        if (kvPlan != null) return kvPlan.toString();
        ModelConfig c = runner.config();
        var l = io.modelopt.core.kv.KvLayout.of(c.numLayers(), c.numKvHeads(), c.headDim(), 1, 16, runner.options().kvDtype());
        return String.format(java.util.Locale.ROOT, "KV cache %s: %,.0f bytes/token (no budget: one contiguous region per sequence)",
                l.dtype().cliName(), l.bytesPerToken());
    }

    /** Every tensor as this model holds it (quantized: each weight's format), with bits per weight. */
    public ModelDescription describe() { return ModelDescription.of(source); }

    /** The model's tensors as bound (the in-memory quantized model after {@code quantize}). */
    public ModelSource source() { return source; }

    /**
     * Writes the model in another tool's format: {@code "gguf"}, {@code "awq"}, {@code "gptq"} or
     * {@code "compressed-tensors"}, by the {@link ModelExporter} registered for it (the
     * quantization module's). Progress goes to the listener given to {@link ModelOptimizer#withProgress}.
     *
     * @throws IllegalArgumentException no exporter is registered for {@code format} (the message
     *         names those that are), or the format cannot hold the model's weight formats
     */
    public void export(Path out, String format) {
        exporter(format).export(source, out, progress);
    }

    /** The registered exporter for {@code format} (case-insensitive). */
    public static ModelExporter exporter(String format) {
        String f = format == null ? "" : format.trim().toLowerCase(Locale.ROOT);
        List<String> known = new ArrayList<>();
        for (ModelExporter e : ServiceLoader.load(ModelExporter.class)) {
            if (e.format().equalsIgnoreCase(f)) return e;
            known.add(e.format());
        }
        throw new IllegalArgumentException("no exporter for format '" + format + "' is registered"
                + (known.isEmpty() ? " (none is: add the io.modelopt:modelopt-quantization module)" : "; registered: " + String.join(", ", known))
                + " (formats: gguf, awq, gptq, compressed-tensors)");
    }

    /**
     * The serving engine on this model (the scheduler module's continuous-batching {@code Engine};
     * cast to it for the full API), started on first use and closed with the model; {@link #generate}
     * runs on it.
     *
     * @throws IllegalStateException if no engine module is on the class or module path
     */
    public synchronized io.modelopt.core.spi.ServingEngine engine() {
        io.modelopt.core.spi.ServingEngine e = engineIfRegistered();
        if (e == null) throw new IllegalStateException("no serving engine is registered (add the io.modelopt:modelopt-scheduler module)");
        return e;
    }

    /** The engine, started on first use, or null when no engine module is registered. */
    private synchronized io.modelopt.core.spi.ServingEngine engineIfRegistered() {
        if (engine == null && !noEngine) {
            var provider = ServiceLoader.load(io.modelopt.core.spi.EngineProvider.class).findFirst();
            if (provider.isEmpty()) noEngine = true;
            else engine = provider.get().start(this);
        }
        return engine;
    }

    @Override public void close() {
        try {
            synchronized (this) {
                if (engine != null) engine.close();
            }
            generator.close();
            runner.close();
        } finally {
            source.close();
        }
    }
}
