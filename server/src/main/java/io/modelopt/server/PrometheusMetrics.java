package io.modelopt.server;

import io.modelopt.scheduler.LatencyHistogram;
import io.modelopt.scheduler.MetricsSnapshot;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code GET /metrics}: the engine's {@link MetricsSnapshot} and the server's response counts in
 * the Prometheus text exposition format (version 0.0.4), names prefixed {@code modelopt_}.
 */
final class PrometheusMetrics {
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** "endpoint status" → responses, counted by the access log. */
    private final Map<String, LongAdder> responses = new ConcurrentHashMap<>();

    void countResponse(String path, int status) {
        responses.computeIfAbsent(path + " " + status, k -> new LongAdder()).increment();
    }

    String render(MetricsSnapshot m) {
        StringBuilder sb = new StringBuilder(4096);
        if (m != null) {
            histogram(sb, m.ttft(), "time to the first generated token of a request, from its arrival at the engine");
            histogram(sb, m.interToken(), "time between two generated tokens of a sample");
            histogram(sb, m.e2e(), "time from a request's arrival at the engine to its end");
            histogram(sb, m.queueTime(), "time a request waited before its prompt was first scheduled");
            sb.append("# HELP modelopt_requests_total requests that left the engine, by outcome (rejected: refused at once, queue full)\n");
            sb.append("# TYPE modelopt_requests_total counter\n");
            sample(sb, "modelopt_requests_total{outcome=\"completed\"}", m.completed());
            sample(sb, "modelopt_requests_total{outcome=\"cancelled\"}", m.cancelled());
            sample(sb, "modelopt_requests_total{outcome=\"expired\"}", m.expired());
            sample(sb, "modelopt_requests_total{outcome=\"failed\"}", m.failed());
            sample(sb, "modelopt_requests_total{outcome=\"rejected\"}", m.rejected());
            counter(sb, "modelopt_prompt_tokens_total", "prompt tokens of the requests admitted", m.promptTokens());
            counter(sb, "modelopt_generation_tokens_total", "tokens generated", m.generatedTokens());
            counter(sb, "modelopt_preemptions_total", "sequences preempted for want of KV blocks (recomputed later)", m.preemptions());
            counter(sb, "modelopt_engine_steps_total", "engine steps (one forward pass each)", m.steps());
            gauge(sb, "modelopt_requests_running", "sequences running in the engine", m.running());
            gauge(sb, "modelopt_requests_waiting", "sequences waiting for admission", m.waiting());
            gauge(sb, "modelopt_kv_blocks_used", "KV cache blocks in use", m.kvBlocksUsed());
            gauge(sb, "modelopt_kv_blocks_free", "KV cache blocks free", m.kvBlocksFree());
            double total = m.kvBlocksUsed() + m.kvBlocksFree();
            gauge(sb, "modelopt_kv_cache_usage_ratio", "fraction of the KV cache blocks in use", total == 0 ? 0 : m.kvBlocksUsed() / total);
            gauge(sb, "modelopt_prefix_cache_hit_rate", "prompt blocks found in the prefix cache / looked up", m.prefixCacheHitRate());
            gauge(sb, "modelopt_decode_tokens_per_second", "tokens per second of the steps without prefill (S_TG)", m.decodeTokensPerSecond());
        }
        sb.append("# HELP modelopt_http_responses_total HTTP responses by path and status\n");
        sb.append("# TYPE modelopt_http_responses_total counter\n");
        new TreeMap<>(responses).forEach((k, v) -> {
            int sp = k.lastIndexOf(' ');
            sample(sb, "modelopt_http_responses_total{path=\"" + k.substring(0, sp) + "\",status=\"" + k.substring(sp + 1) + "\"}", v.sum());
        });
        return sb.toString();
    }

    private static void histogram(StringBuilder sb, LatencyHistogram.Snapshot h, String help) {
        String name = "modelopt_" + h.name();
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
        sb.append("# TYPE ").append(name).append(" histogram\n");
        long[] counts = h.bucketCounts();
        long cumulative = 0;
        for (int i = 0; i < counts.length; i++) {
            cumulative += counts[i];
            String le = i < LatencyHistogram.BOUNDS.length ? number(LatencyHistogram.BOUNDS[i]) : "+Inf";
            sample(sb, name + "_bucket{le=\"" + le + "\"}", cumulative);
        }
        sb.append(name).append("_sum ").append(number(h.sumSeconds())).append('\n');
        sample(sb, name + "_count", h.count());
    }

    private static void counter(StringBuilder sb, String name, String help, long v) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n').append("# TYPE ").append(name).append(" counter\n");
        sample(sb, name, v);
    }

    private static void gauge(StringBuilder sb, String name, String help, double v) {
        sb.append("# HELP ").append(name).append(' ').append(help).append('\n').append("# TYPE ").append(name).append(" gauge\n");
        sb.append(name).append(' ').append(number(v)).append('\n');
    }

    private static void sample(StringBuilder sb, String series, long v) { sb.append(series).append(' ').append(v).append('\n'); }

    private static String number(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return String.format(Locale.ROOT, "%s", v);
    }
}
