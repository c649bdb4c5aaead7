package io.modelopt.scheduler;

import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.sampling.TokenLogprobs;
import java.time.Duration;
import java.util.Objects;

/**
 * One request to an {@link Engine}: a prompt (text, tokenized by the engine, or token ids), the
 * generation options (max tokens, sampling, stop strings), {@code n} parallel samples and an
 * optional timeout. Sample {@code i} uses the sampling seed {@code seed + i}; the samples share the
 * prompt's KV blocks (copy-on-write). With {@link Builder#logprobs(int)} each token event carries
 * the token's {@link TokenLogprobs}. Immutable; build with {@link #builder()}.
 */
public final class EngineRequest {
    private final String prompt;
    private final int[] promptTokens;
    private final GenerationOptions options;
    private final int n;
    private final Duration timeout;
    private final boolean ignoreEos;
    private final int logprobs;

    private EngineRequest(Builder b) {
        if (b.prompt == null && b.promptTokens == null) throw new IllegalArgumentException("a request needs a prompt (text or token ids)");
        if (b.prompt != null && b.promptTokens != null) throw new IllegalArgumentException("a request takes a prompt as text or as token ids, not both");
        if (b.prompt != null && b.prompt.isEmpty()) throw new IllegalArgumentException("the prompt is empty");
        if (b.promptTokens != null) {
            if (b.promptTokens.length == 0) throw new IllegalArgumentException("the prompt has no tokens");
            for (int i = 0; i < b.promptTokens.length; i++) {
                if (b.promptTokens[i] < 0) throw new IllegalArgumentException("prompt token " + i + " is " + b.promptTokens[i] + ", must be >= 0");
            }
        }
        if (b.maxTokens != null && b.maxTokens < 1) throw new IllegalArgumentException("maxTokens must be >= 1, got " + b.maxTokens);
        if (b.n < 1) throw new IllegalArgumentException("n (parallel samples) must be >= 1, got " + b.n);
        if (b.timeout != null && (b.timeout.isNegative() || b.timeout.isZero())) throw new IllegalArgumentException("timeout must be positive, got " + b.timeout);
        this.prompt = b.prompt;
        this.promptTokens = b.promptTokens == null ? null : b.promptTokens.clone();
        GenerationOptions o = b.options == null ? GenerationOptions.defaults() : b.options;
        if (b.maxTokens != null) o = new GenerationOptions(b.maxTokens, o.sampling(), o.stopStrings());
        this.options = o;
        this.n = b.n;
        this.timeout = b.timeout;
        this.ignoreEos = b.ignoreEos;
        this.logprobs = b.logprobs;
    }

    /**
     * How many top entries each token's logprobs list: -1 = no logprobs (the default), 0 = only the
     * chosen token's, up to {@link TokenLogprobs#MAX_TOP_LOGPROBS}.
     */
    public int logprobs() { return logprobs; }

    /** Whether the token events carry logprobs. */
    public boolean wantsLogprobs() { return logprobs >= 0; }

    /** Whether end-of-sequence tokens are taken as ordinary tokens (benchmarks: always {@code maxTokens} tokens). */
    public boolean ignoreEos() { return ignoreEos; }

    /** The prompt text, or null when given as token ids. */
    public String prompt() { return prompt; }

    /** The prompt token ids, or null when given as text. */
    public int[] promptTokens() { return promptTokens == null ? null : promptTokens.clone(); }

    public GenerationOptions options() { return options; }

    /** Parallel samples. */
    public int n() { return n; }

    /** Time from submit after which the request ends as expired; null for none. */
    public Duration timeout() { return timeout; }

    public static Builder builder() { return new Builder(); }

    /** A greedy request of {@code maxTokens} tokens for {@code prompt}. */
    public static EngineRequest of(String prompt, int maxTokens) { return builder().prompt(prompt).maxTokens(maxTokens).build(); }

    public static final class Builder {
        private String prompt;
        private int[] promptTokens;
        private GenerationOptions options;
        private Integer maxTokens;
        private int n = 1;
        private Duration timeout;
        private boolean ignoreEos;
        private int logprobs = -1;

        private Builder() {}

        /**
         * Asks for each token's log-probabilities (of the raw logits, see {@link TokenLogprobs}) and
         * the {@code topN} most likely tokens' (0 = the chosen token's only).
         *
         * @throws IllegalArgumentException if {@code topN} is negative or above {@link TokenLogprobs#MAX_TOP_LOGPROBS}
         */
        public Builder logprobs(int topN) {
            if (topN < 0 || topN > TokenLogprobs.MAX_TOP_LOGPROBS) {
                throw new IllegalArgumentException("logprobs (top entries per token) must be in [0, "
                        + TokenLogprobs.MAX_TOP_LOGPROBS + "], got " + topN);
            }
            logprobs = topN;
            return this;
        }

        public Builder ignoreEos(boolean v) { ignoreEos = v; return this; }

        public Builder prompt(String v) { prompt = Objects.requireNonNull(v, "prompt"); return this; }
        public Builder promptTokens(int[] v) { promptTokens = Objects.requireNonNull(v, "promptTokens").clone(); return this; }
        public Builder options(GenerationOptions v) { options = Objects.requireNonNull(v, "options"); return this; }
        /** Overrides the options' max tokens. */
        public Builder maxTokens(int v) { maxTokens = v; return this; }
        public Builder n(int v) { n = v; return this; }
        public Builder timeout(Duration v) { timeout = v; return this; }

        /** @throws IllegalArgumentException naming what is wrong (no or empty prompt, negative token ids, maxTokens or n below 1) */
        public EngineRequest build() { return new EngineRequest(this); }
    }
}
