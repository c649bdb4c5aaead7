package io.modelopt.scheduler;

/**
 * The engine's metrics at one moment ({@link Engine#metrics()}): request counts, tokens, the
 * scheduler's state, the KV pool and the latency histograms, for an exporter (Prometheus) or a log.
 *
 * @param decodeOnlySteps  steps that scheduled no prefill token
 * @param decodeOnlyTokens tokens those steps generated
 * @param decodeOnlyNanos  their time; {@link #decodeTokensPerSecond()} is llama-batched-bench's S_TG
 * @param prefixCacheHitRate cached prompt blocks found / looked up (0 without lookups)
 */
public record MetricsSnapshot(long submitted, long rejected, long completed, long cancelled, long expired, long failed, long preemptions,
                              long promptTokens, long generatedTokens, long steps, int running, int waiting, int preemptedWaiting,
                              int kvBlocksUsed, int kvBlocksFree, double prefixCacheHitRate, long decodeOnlySteps, long decodeOnlyTokens,
                              long decodeOnlyNanos, double uptimeSeconds, LatencyHistogram.Snapshot ttft, LatencyHistogram.Snapshot interToken,
                              LatencyHistogram.Snapshot e2e, LatencyHistogram.Snapshot queueTime) {

    static MetricsSnapshot of(EngineMetrics m) {
        return new MetricsSnapshot(m.submitted.sum(), m.rejected.sum(), m.completed.sum(), m.cancelled.sum(), m.expired.sum(), m.failed.sum(),
                m.preemptions.sum(), m.promptTokens.sum(), m.generatedTokens.sum(), m.steps.sum(), m.running, m.waiting, m.preemptedWaiting,
                m.kvBlocksUsed, m.kvBlocksFree, m.prefixCacheHitRate, m.decodeOnlySteps.sum(), m.decodeOnlyTokens.sum(), m.decodeOnlyNanos.sum(),
                (System.nanoTime() - m.startNanos) / 1e9, m.ttft.snapshot(), m.interToken.snapshot(), m.e2e.snapshot(), m.queue.snapshot());
    }

    /** Generated tokens per second of the steps without prefill (S_TG). */
    public double decodeTokensPerSecond() { return decodeOnlyNanos == 0 ? 0 : decodeOnlyTokens * 1e9 / decodeOnlyNanos; }

    /** Prompt tokens admitted per second since the engine started. */
    public double promptTokensPerSecond() { return uptimeSeconds <= 0 ? 0 : promptTokens / uptimeSeconds; }

    /** Tokens generated per second since the engine started (all steps, idle time included). */
    public double generatedTokensPerSecond() { return uptimeSeconds <= 0 ? 0 : generatedTokens / uptimeSeconds; }

    /** Prompt tokens admitted per second between {@code earlier} (a snapshot of the same engine) and this one. */
    public double promptTokensPerSecondSince(MetricsSnapshot earlier) {
        double dt = uptimeSeconds - earlier.uptimeSeconds;
        return dt <= 0 ? 0 : (promptTokens - earlier.promptTokens) / dt;
    }

    /** Tokens generated per second between {@code earlier} (a snapshot of the same engine) and this one. */
    public double generatedTokensPerSecondSince(MetricsSnapshot earlier) {
        double dt = uptimeSeconds - earlier.uptimeSeconds;
        return dt <= 0 ? 0 : (generatedTokens - earlier.generatedTokens) / dt;
    }

    /** The one-line summary, token rates since the engine started. */
    public String line() { return line(null); }

    /** The one-line summary the engine logs periodically: token rates since {@code previous} (since the start when null). */
    public String line(MetricsSnapshot previous) {
        double prompt = previous == null ? promptTokensPerSecond() : promptTokensPerSecondSince(previous);
        double gen = previous == null ? generatedTokensPerSecond() : generatedTokensPerSecondSince(previous);
        return String.format(java.util.Locale.ROOT,
                "engine: running %d, waiting %d (%d preempted), KV blocks %d used / %d free, prefix hit %.1f%%, requests %d done / %d cancelled / %d expired / %d failed / %d rejected, "
                        + "tokens %d prompt / %d generated, %.1f prompt / %.1f generated tokens/s %s, decode %.1f tokens/s, TTFT mean %.1f ms, ITL mean %.1f ms, preemptions %d",
                running, waiting, preemptedWaiting, kvBlocksUsed, kvBlocksFree, 100 * prefixCacheHitRate, completed, cancelled, expired, failed, rejected,
                promptTokens, generatedTokens, prompt, gen, previous == null ? "since start" : "since the last line", decodeTokensPerSecond(),
                ttft.meanSeconds() * 1e3, interToken.meanSeconds() * 1e3, preemptions);
    }
}
