package io.modelopt.core.generate;

import java.util.Objects;

/**
 * The outcome of one generation.
 *
 * @param promptTokenIds the prompt as it was run (BOS included when the tokenizer added it)
 * @param tokenIds       the generated tokens, in order: every sampled token except a final
 *                       end-of-sequence token; with {@link FinishReason#STOP_STRING} including
 *                       the token(s) whose text reached the stop string
 * @param text           the generated text: what the listener received; without the stop
 *                       string and anything after it
 * @param finishReason   why generation ended
 * @param timings        prefill / first-token / per-token decode times
 */
public record GenerationResult(int[] promptTokenIds, int[] tokenIds, String text, FinishReason finishReason, GenerationTimings timings) {

    public GenerationResult {
        promptTokenIds = promptTokenIds.clone();
        tokenIds = tokenIds.clone();
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(finishReason, "finishReason");
        Objects.requireNonNull(timings, "timings");
    }

    @Override public int[] promptTokenIds() { return promptTokenIds.clone(); }

    @Override public int[] tokenIds() { return tokenIds.clone(); }

    /** Number of generated tokens. */
    public int generatedTokens() { return tokenIds.length; }

    @Override public String toString() {
        return "GenerationResult[" + tokenIds.length + " tokens, " + finishReason + ", " + timings + "]";
    }
}
