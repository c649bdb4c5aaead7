package io.modelopt.core.generate;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.tokenizer.Tokenizer;
import java.util.Arrays;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Generates text for one prompt at a time on a {@link ModelRunner}: tokenize (BOS as the
 * tokenizer adds it), prefill the prompt, then one single-token decode step per generated token,
 * streaming each token and its text to a {@link TokenListener}.
 *
 * <p><b>Prefill</b> is one batch holding the whole prompt, logits only for its last token. A
 * prompt longer than the runner's {@code maxBatchTokens} is prefilled in consecutive chunks of
 * that size (the result is the same; only the last chunk asks for logits).
 *
 * <p><b>Stopping</b>: at an end-of-sequence token (any of the model config's
 * {@code eosTokenIds} or the tokenizer's EOS; it is neither reported nor part of the result), when
 * the decoded text contains a stop string (the text is cut before it), after
 * {@code maxTokens} tokens, or when the context is full.
 *
 * <p><b>Context length policy</b>: the prompt plus the generated tokens never exceed the
 * context length C ({@link ModelRunner#contextLength()}). A prompt of P ≥ C tokens leaves no
 * room and is rejected up front with an {@link IllegalArgumentException} that names P and C.
 * A prompt that fits is run even when P + maxTokens exceeds C: generation then ends after
 * C − P tokens with {@link FinishReason#CONTEXT_FULL} (rather than refusing work that may well
 * end at an EOS long before the limit). Nothing is evicted or shifted.
 *
 * <p>What decides the next token and the end (sampling, stop strings, EOS, budget) is a
 * {@link SequenceState}, the same object a scheduler drives for each of its sequences.
 *
 * <p>The generator owns a one-sequence KV cache of the runner's context length, reused (cleared)
 * by every call; {@link #close()} frees it. The runner stays the caller's. Not thread-safe: one
 * generation at a time.
 */
public final class Generator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Generator.class);
    private static final int SEQ = 0;

    private final ModelRunner runner;
    private final Tokenizer tokenizer;
    private final KvCache cache;
    private final int contextLength;
    private final int vocabSize;
    private final int[] eosIds;

    public Generator(ModelRunner runner, Tokenizer tokenizer) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.tokenizer = Objects.requireNonNull(tokenizer, "tokenizer");
        this.contextLength = runner.contextLength();
        this.vocabSize = runner.config().vocabSize();
        this.eosIds = eosIds(runner.config().eosTokenIds(), tokenizer.eosId());
        this.cache = runner.newKvCache(1, contextLength);
    }

    /** Positions available to prompt + generated tokens. */
    public int contextLength() { return contextLength; }

    /** The token ids that end generation. */
    public int[] eosTokenIds() { return eosIds.clone(); }

    public Tokenizer tokenizer() { return tokenizer; }

    /**
     * Tokenizes {@code prompt} as llama.cpp does for a prompt (BOS as the tokenizer adds it,
     * special-token text parsed) and generates from it.
     *
     * @throws IllegalArgumentException if the prompt has no tokens or does not leave room in the context
     */
    public GenerationResult generate(String prompt, GenerationOptions options, TokenListener listener) {
        long t0 = System.nanoTime();
        int[] ids = tokenizer.encode(prompt, true, true);
        long tokenized = System.nanoTime();
        return run(ids, options, listener, t0, tokenized - t0);
    }

    /** Generates from already tokenized prompt ids (used as given: nothing is added). */
    public GenerationResult generate(int[] promptIds, GenerationOptions options, TokenListener listener) {
        return run(promptIds.clone(), options, listener, System.nanoTime(), 0);
    }

    private GenerationResult run(int[] prompt, GenerationOptions options, TokenListener listener, long t0, long tokenizeNanos) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(listener, "listener");
        int p = prompt.length;
        if (p == 0) {
            throw new IllegalArgumentException("the prompt has no tokens (an empty text and a tokenizer that adds no BOS); nothing to generate from");
        }
        if (p >= contextLength) {
            throw new IllegalArgumentException("the prompt has " + p + " tokens but the context length is " + contextLength
                    + " positions; prompt plus generated tokens must fit, so at most " + (contextLength - 1)
                    + " prompt tokens leave room for one generated token (" + options.maxTokens() + " were requested)");
        }
        for (int i = 0; i < p; i++) {
            if (prompt[i] < 0 || prompt[i] >= vocabSize) {
                throw new IllegalArgumentException("prompt token " + i + " is " + prompt[i] + ", outside the vocabulary of " + vocabSize);
            }
        }
        int budget = Math.min(options.maxTokens(), contextLength - p);
        if (budget < options.maxTokens()) {
            log.debug("prompt of {} tokens + {} requested exceeds context {}: at most {} tokens, then CONTEXT_FULL", p, options.maxTokens(), contextLength, budget);
        }

        SequenceState state = new SequenceState(prompt, options, tokenizer, eosIds, vocabSize, contextLength);

        cache.clear(SEQ);
        long prefillStart = System.nanoTime();
        Logits logits = prefill(prompt);
        long prefillEnd = System.nanoTime();
        int token = state.sample(logits.buffer(), logits.offset(0));
        long ttft = System.nanoTime() - t0;

        long[] decodeNanos = new long[Math.max(0, budget - 1)];
        int steps = 0;
        while (state.accept(token, listener)) {
            long stepStart = System.nanoTime();
            logits = runner.forward(Batch.decodeStep(new int[] {SEQ}, new int[] {token}, new int[] {state.nextPosition()}), cache);
            token = state.sample(logits.buffer(), logits.offset(0));
            decodeNanos[steps++] = System.nanoTime() - stepStart;
        }
        FinishReason reason = state.finishReason();
        int n = state.generatedCount();

        var timings = new GenerationTimings(p, tokenizeNanos, prefillEnd - prefillStart, ttft, Arrays.copyOf(decodeNanos, steps));
        log.debug("generated {} tokens ({}): {}", n, reason, timings);
        return new GenerationResult(prompt, state.generated(), state.text(), reason, timings);
    }

    /** Runs the prompt through the model, in one batch when it fits the runner's batch size; returns the last token's logits. */
    private Logits prefill(int[] prompt) {
        int chunk = runner.options().maxBatchTokens();
        Logits logits = null;
        for (int from = 0; from < prompt.length; from += chunk) {
            int to = Math.min(prompt.length, from + chunk);
            Batch.Builder b = Batch.builder(to - from);
            for (int i = from; i < to; i++) b.add(prompt[i], i, SEQ, i == prompt.length - 1);
            logits = runner.forward(b.build(), cache);
        }
        return logits;
    }

    /** Frees the KV cache; the runner stays open. */
    @Override public void close() {
        cache.close();
    }

    /**
     * The ids that end a generation: the model config's EOS ids plus the tokenizer's own EOS id
     * when the config does not list it (the engine uses the same rule for each of its sequences).
     */
    public static int[] eosIds(int[] configEos, int tokenizerEos) {
        if (tokenizerEos < 0 || Arrays.stream(configEos).anyMatch(e -> e == tokenizerEos)) return configEos.clone();
        int[] eos = Arrays.copyOf(configEos, configEos.length + 1);
        eos[eos.length - 1] = tokenizerEos;
        return eos;
    }
}
