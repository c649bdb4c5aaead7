package io.modelopt.core.generate;

/**
 * Where the time of one generation went. All durations are wall-clock nanoseconds.
 *
 * @param promptTokens      tokens of the prompt (BOS included when the tokenizer added it)
 * @param tokenizeNanos     encoding the prompt text (0 when token ids were given)
 * @param prefillNanos      the forward pass(es) over the prompt
 * @param timeToFirstToken  from the start of {@code generate} to the first generated token chosen
 *                          (tokenize + prefill + first sample)
 * @param decodeNanos       for each generated token after the first: its decode step (forward
 *                          of the previous token + sampling); {@code generatedTokens - 1} entries
 *                          or fewer when generation ended early
 */
public record GenerationTimings(int promptTokens, long tokenizeNanos, long prefillNanos, long timeToFirstToken, long[] decodeNanos) {

    public GenerationTimings {
        decodeNanos = decodeNanos.clone();
    }

    @Override public long[] decodeNanos() { return decodeNanos.clone(); }

    /** Number of decode steps. */
    public int decodeSteps() { return decodeNanos.length; }

    /** Total decode time. */
    public long totalDecodeNanos() {
        long s = 0;
        for (long d : decodeNanos) s += d;
        return s;
    }

    /** Prompt tokens per second of prefill. */
    public double prefillTokensPerSecond() {
        return prefillNanos == 0 ? 0 : promptTokens * 1e9 / prefillNanos;
    }

    /** Decode steps per second (0 when there were none). */
    public double decodeTokensPerSecond() {
        long t = totalDecodeNanos();
        return t == 0 ? 0 : decodeNanos.length * 1e9 / t;
    }

    @Override public String toString() {
        return String.format(java.util.Locale.ROOT, "GenerationTimings[prompt %d tokens, prefill %.2f ms, TTFT %.2f ms, %d decode steps, %.1f tokens/s]",
                promptTokens, prefillNanos / 1e6, timeToFirstToken / 1e6, decodeNanos.length, decodeTokensPerSecond());
    }
}
