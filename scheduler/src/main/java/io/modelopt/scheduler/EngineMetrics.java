package io.modelopt.scheduler;

import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's counters and latency histograms. Written by the step loop and {@code submit};
 * read at any time with {@link Engine#metrics()}.
 */
final class EngineMetrics {
    final LatencyHistogram ttft = new LatencyHistogram("time_to_first_token_seconds");
    final LatencyHistogram interToken = new LatencyHistogram("inter_token_latency_seconds");
    final LatencyHistogram e2e = new LatencyHistogram("e2e_request_latency_seconds");
    final LatencyHistogram queue = new LatencyHistogram("request_queue_time_seconds");
    final LongAdder submitted = new LongAdder(), rejected = new LongAdder(), completed = new LongAdder(), cancelled = new LongAdder(),
            expired = new LongAdder(), failed = new LongAdder(), preemptions = new LongAdder(), promptTokens = new LongAdder(),
            generatedTokens = new LongAdder(), steps = new LongAdder();
    final long startNanos = System.nanoTime();
    /** Steps that scheduled no prefill token: their generated tokens and time (llama-batched-bench's S_TG). */
    final LongAdder decodeOnlySteps = new LongAdder(), decodeOnlyTokens = new LongAdder(), decodeOnlyNanos = new LongAdder();
    volatile int running, waiting, preemptedWaiting, kvBlocksUsed, kvBlocksFree;
    volatile double prefixCacheHitRate;
}
