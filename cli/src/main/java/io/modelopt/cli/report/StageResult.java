package io.modelopt.cli.report;

import java.util.List;
import java.util.Objects;

/**
 * What one stage measured, or why it could not be measured. Absent figures are NaN (doubles) or
 * -1 (byte counts); every writer prints them as "n/a" (Markdown), an empty cell (CSV) or null (JSON).
 *
 * @param configuration what ran, in words ("F16 weights, F16 KV, one request at a time")
 * @param unavailable   why the stage was not measured, or null when it was
 * @param bitsPerWeight stored bits per model parameter, over all tensors (NaN when unavailable)
 * @param notes         footnotes of this stage (e.g. "--calib not used by RTN")
 */
public record StageResult(Stage stage, String configuration, String unavailable, Speed speed, Memory memory,
                          double bitsPerWeight, Quality quality, Concurrency concurrency, List<String> notes) {
    public StageResult {
        Objects.requireNonNull(stage, "stage");
        Objects.requireNonNull(configuration, "configuration");
        notes = List.copyOf(notes);
        if (unavailable == null) {
            Objects.requireNonNull(speed, "speed");
            Objects.requireNonNull(memory, "memory");
            Objects.requireNonNull(quality, "quality");
            Objects.requireNonNull(concurrency, "concurrency");
        }
    }

    /** A stage that could not run here, with the reason (what it needs). */
    public static StageResult unavailable(Stage stage, String configuration, String reason) {
        return new StageResult(stage, configuration, Objects.requireNonNull(reason, "reason"), null, null, Double.NaN, null, null, List.of());
    }

    public boolean available() { return unavailable == null; }

    /**
     * Single-stream speed, over the measured runs.
     *
     * @param warmupRuns      runs before the measured ones (at least --warmup, and at least 3 s of them)
     * @param ttftMillis      time to the prompt's last logits (prefill of the fixed-length prompt)
     * @param prefillPerSecond prompt tokens per second
     * @param decodePerSecond greedy decode steps per second, one sequence
     */
    public record Speed(int warmupRuns, Spread ttftMillis, Spread prefillPerSecond, Spread decodePerSecond) {
        public Speed {
            Objects.requireNonNull(ttftMillis, "ttftMillis");
            Objects.requireNonNull(prefillPerSecond, "prefillPerSecond");
            Objects.requireNonNull(decodePerSecond, "decodePerSecond");
        }
    }

    /**
     * Memory, as the runner accounts it plus the process's resident set sampled during the stage.
     *
     * @param weightBytes     the model's tensors as the runner binds them
     * @param kvBytes         the KV cache of the measured runs (prompt + generated positions); for
     *                        the engine's stage, its block pool (the concurrent requests' KV)
     * @param otherBytes      activations and per-thread scratch, allocated once at load
     * @param rssPeakBytes    highest resident set while the stage loaded and ran (-1: no /proc)
     * @param rssSteadyBytes  median resident set over the measured runs (-1: no /proc)
     * @param kvBytesPerToken KV bytes one token adds over all layers, keys and values, scales included
     */
    public record Memory(long weightBytes, long kvBytes, long otherBytes, long rssPeakBytes, long rssSteadyBytes, double kvBytesPerToken) {
        /** Weights + KV + other: what the memory budget is compared with (it does not depend on stage order, RSS does). */
        public long totalBytes() { return weightBytes + kvBytes + otherBytes; }
    }

    /**
     * Quality against the baseline on the evaluation token set.
     *
     * @param positions       next-token distributions compared
     * @param meanKl          mean KL(P_baseline ‖ P_stage), nats
     * @param maxKl           largest KL at one position, nats
     * @param top1Agreement   fraction of positions where both rank the same token first
     * @param perplexity      perplexity on --text (NaN without it)
     * @param perplexityChangePercent (PPL_stage / PPL_baseline - 1) × 100 (NaN without --text)
     */
    public record Quality(long positions, double meanKl, double maxKl, double top1Agreement, double perplexity,
                          double perplexityChangePercent) {
        /** The baseline against itself: no divergence by definition (not measured: it would only re-run the same model). */
        public static Quality reference(long positions, double perplexity) {
            return new Quality(positions, 0, 0, 1, perplexity, Double.isNaN(perplexity) ? Double.NaN : 0);
        }

        public boolean hasPerplexity() { return !Double.isNaN(perplexity); }
    }

    /**
     * {@code requests} requests that share a system prompt, all submitted at once; times from
     * submission, so a request that waits for others counts its wait.
     *
     * @param concurrent          served through the engine together (false: one at a time, in order)
     * @param tokensPerSecond     generated tokens of all requests / wall time from submission to the last completion
     * @param meanCompletionSeconds mean time from submission to a request's last token
     * @param p95CompletionSeconds  95th percentile of it (nearest rank)
     * @param p95TtftMillis       95th percentile of the time from submission to a request's first token
     * @param generatedTokens     tokens generated over all requests (fewer than asked when one ends at EOS)
     * @param prefixHitRate       cached prompt blocks found / looked up (0 without prefix caching)
     */
    public record Concurrency(int requests, boolean concurrent, double tokensPerSecond, double meanCompletionSeconds, double p95CompletionSeconds,
                              double p95TtftMillis, long generatedTokens, double prefixHitRate) {}
}
