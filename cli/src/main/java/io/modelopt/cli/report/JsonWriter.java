package io.modelopt.cli.report;

import io.modelopt.core.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The report as JSON (core's {@link Json}): method, stages with raw figures (null when absent), recommendation. */
public final class JsonWriter {
    private JsonWriter() {}

    public static String write(Report report) {
        return Json.writePretty(toJson(report)) + "\n";
    }

    static Map<String, Object> toJson(Report report) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("header", report.header().toJson());
        List<Object> stages = new ArrayList<>();
        for (StageResult r : report.stages()) stages.add(stage(r));
        m.put("stages", stages);
        Recommendation rec = report.recommendation();
        Map<String, Object> rm = new LinkedHashMap<>();
        rm.put("rule", rec.rule());
        rm.put("chosen_stage", rec.chosen().map(Stage::number).orElse(null));
        List<Object> verdicts = new ArrayList<>();
        for (Recommendation.Verdict v : rec.verdicts()) {
            Map<String, Object> vm = new LinkedHashMap<>();
            vm.put("stage", v.stage().number());
            vm.put("meets_bounds", v.meetsBounds());
            vm.put("reason", v.reason());
            verdicts.add(vm);
        }
        rm.put("verdicts", verdicts);
        m.put("recommendation", rm);
        m.put("concurrent8_note", Report.CONCURRENT_NOTE);
        return m;
    }

    private static Map<String, Object> stage(StageResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("stage", r.stage().number());
        m.put("key", r.stage().key());
        m.put("configuration", r.configuration());
        m.put("available", r.available());
        m.put("not_available", r.unavailable());
        if (r.available()) {
            m.put("warmup_runs", r.speed().warmupRuns());
            m.put("ttft_ms", spread(r.speed().ttftMillis()));
            m.put("prefill_tokens_per_s", spread(r.speed().prefillPerSecond()));
            m.put("decode_tokens_per_s", spread(r.speed().decodePerSecond()));
            StageResult.Memory mem = r.memory();
            m.put("weight_bytes", mem.weightBytes());
            m.put("kv_bytes", mem.kvBytes());
            m.put("other_bytes", mem.otherBytes());
            m.put("total_bytes", mem.totalBytes());
            m.put("rss_peak_bytes", mem.rssPeakBytes() < 0 ? null : mem.rssPeakBytes());
            m.put("rss_steady_bytes", mem.rssSteadyBytes() < 0 ? null : mem.rssSteadyBytes());
            m.put("bits_per_weight", num(r.bitsPerWeight()));
            StageResult.Quality q = r.quality();
            m.put("eval_positions", q.positions());
            m.put("mean_kl_nats", num(q.meanKl()));
            m.put("max_kl_nats", num(q.maxKl()));
            m.put("top1_agreement", num(q.top1Agreement()));
            m.put("perplexity", num(q.perplexity()));
            m.put("perplexity_change_percent", num(q.perplexityChangePercent()));
            m.put("kv_bytes_per_token", num(mem.kvBytesPerToken()));
            StageResult.Concurrency c = r.concurrency();
            m.put("concurrent8_requests", c.requests());
            m.put("concurrent8_through_engine", c.concurrent());
            m.put("concurrent8_tokens_per_s", num(c.tokensPerSecond()));
            m.put("concurrent8_mean_completion_s", num(c.meanCompletionSeconds()));
            m.put("concurrent8_p95_completion_s", num(c.p95CompletionSeconds()));
            m.put("concurrent8_p95_ttft_ms", num(c.p95TtftMillis()));
            m.put("concurrent8_generated_tokens", c.generatedTokens());
            m.put("concurrent8_prefix_hit_rate", num(c.prefixHitRate()));
        }
        m.put("notes", r.notes());
        return m;
    }

    private static Map<String, Object> spread(Spread s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("median", s.median());
        m.put("min", s.min());
        m.put("max", s.max());
        m.put("runs", s.count());
        return m;
    }

    private static Double num(double v) { return Double.isNaN(v) ? null : v; }
}
