package io.modelopt.core.generate;

import io.modelopt.core.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What one generation may do. Immutable; build with {@link #builder()}.
 *
 * @param maxTokens   most tokens to generate (>= 1); generation also ends earlier at an EOS
 *                    token, a stop string or a full context
 * @param sampling    how tokens are chosen (default greedy)
 * @param stopStrings texts that end generation when the decoded output contains one; the stop
 *                    string itself is not part of the result
 */
public record GenerationOptions(int maxTokens, SamplingParams sampling, List<String> stopStrings) {
    public static final int DEFAULT_MAX_TOKENS = 128;

    public GenerationOptions {
        if (maxTokens < 1) throw new IllegalArgumentException("maxTokens must be >= 1, got " + maxTokens);
        Objects.requireNonNull(sampling, "sampling");
        stopStrings = List.copyOf(stopStrings);
        for (String s : stopStrings) {
            if (s.isEmpty()) throw new IllegalArgumentException("a stop string must not be empty");
        }
    }

    public static GenerationOptions defaults() { return builder().build(); }

    /** These options with another token budget. */
    public GenerationOptions withMaxTokens(int maxTokens) { return new GenerationOptions(maxTokens, sampling, stopStrings); }

    public static Builder builder() { return new Builder(); }

    /** Defaults: 128 tokens, greedy, no stop strings. */
    public static final class Builder {
        private int maxTokens = DEFAULT_MAX_TOKENS;
        private SamplingParams sampling = SamplingParams.greedy();
        private final List<String> stopStrings = new ArrayList<>();

        public Builder maxTokens(int v) { maxTokens = v; return this; }
        public Builder sampling(SamplingParams v) { sampling = v; return this; }
        public Builder stopString(String v) { stopStrings.add(Objects.requireNonNull(v, "stop string")); return this; }
        public Builder stopStrings(List<String> v) { stopStrings.clear(); v.forEach(this::stopString); return this; }

        public GenerationOptions build() { return new GenerationOptions(maxTokens, sampling, stopStrings); }
    }
}
