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
import io.modelopt.core.tokenizer.Tokenizer;

/**
 * What {@link ModelOptimizer#build()} returns: a model bound to a backend, ready to generate and
 * to be measured. Owns its runner and the model files; {@link #close()} releases both (threads,
 * buffers, mappings). Not thread-safe: one call at a time.
 */
public final class OptimizedModel implements AutoCloseable {
    private final ModelSource source;
    private final ModelRunner runner;
    private final Generator generator;

    OptimizedModel(ModelSource source, ModelRunner runner) {
        this.source = source;
        this.runner = runner;
        this.generator = new Generator(runner, source.tokenizer());
    }

    /** Generates a continuation of {@code prompt}; tokens and text stream to {@code listener} (may be null). */
    public GenerationResult generate(String prompt, GenerationOptions options, TokenListener listener) {
        return generator.generate(prompt, options, listener == null ? TokenListener.NONE : listener);
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

    public ModelDescription describe() { return ModelDescription.of(source); }

    @Override public void close() {
        try {
            generator.close();
            runner.close();
        } finally {
            source.close();
        }
    }
}
