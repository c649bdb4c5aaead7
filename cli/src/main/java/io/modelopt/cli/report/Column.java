package io.modelopt.cli.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One column of the comparison, defined once for every output: its Markdown header and cell, and
 * its CSV name and raw value. Keeping both in one place is what makes the table, the CSV and the
 * JSON agree.
 *
 * @param numeric right-aligned in Markdown
 */
record Column(String header, List<String> csvNames, boolean numeric, Function<StageResult, String> cell, Function<StageResult, List<String>> raw) {

    /** A column with one CSV field. */
    static Column single(String header, String csvName, boolean numeric, Function<StageResult, String> cell, Function<StageResult, String> raw) {
        return new Column(header, List.of(csvName), numeric, cell, r -> List.of(raw.apply(r)));
    }

    /** The columns of a report; perplexity ones only when it has perplexities. */
    static List<Column> of(Report report) {
        int prompt = report.header().promptTokens();
        List<Column> c = new ArrayList<>();
        c.add(Column.single("stage", "stage", false, r -> r.stage().number() + " " + r.stage().key(), r -> Integer.toString(r.stage().number())));
        c.add(Column.single("configuration", "configuration", false,
                r -> r.available() ? r.configuration() : r.configuration() + " (not available²)", StageResult::configuration));
        c.add(speed("TTFT ms (" + prompt + " tok)", "ttft_ms", s -> s.ttftMillis()));
        c.add(speed("prefill tok/s", "prefill_tokens_per_s", s -> s.prefillPerSecond()));
        c.add(speed("decode tok/s", "decode_tokens_per_s", s -> s.decodePerSecond()));
        c.add(bytes("weights MiB", "weight_bytes", StageResult.Memory::weightBytes));
        c.add(bytes("KV MiB", "kv_bytes", StageResult.Memory::kvBytes));
        c.add(bytes("other MiB", "other_bytes", StageResult.Memory::otherBytes));
        c.add(bytes("RSS peak MiB", "rss_peak_bytes", StageResult.Memory::rssPeakBytes));
        c.add(bytes("RSS steady MiB", "rss_steady_bytes", StageResult.Memory::rssSteadyBytes));
        c.add(Column.single("bits/weight", "bits_per_weight", true, r -> Format.bits(r.bitsPerWeight()), r -> raw(r.bitsPerWeight())));
        c.add(quality("mean KL nats", "mean_kl_nats", q -> q.meanKl(), Format::kl));
        c.add(quality("top-1", "top1_agreement", q -> q.top1Agreement(), Format::percent));
        if (report.hasPerplexity()) {
            c.add(quality("PPL", "perplexity", q -> q.perplexity(), v -> Double.isNaN(v) ? Format.NA : String.format(Locale.ROOT, "%.3f", v)));
            c.add(quality("PPL change", "perplexity_change_percent", q -> q.perplexityChangePercent(), Format::signedPercent));
        }
        c.add(Column.single("KV B/tok", "kv_bytes_per_token", true, r -> r.available() ? String.format(Locale.ROOT, "%,.0f", r.memory().kvBytesPerToken()) : Format.NA,
                r -> r.available() ? raw(r.memory().kvBytesPerToken()) : ""));
        c.add(concurrency("8× tok/s¹", "concurrent8_tokens_per_s", x -> x.tokensPerSecond(), v -> String.format(Locale.ROOT, "%.1f", v)));
        c.add(new Column("8× mean/p95 s¹", List.of("concurrent8_mean_completion_s", "concurrent8_p95_completion_s"), true,
                r -> r.available() ? String.format(Locale.ROOT, "%.2f / %.2f", r.concurrency().meanCompletionSeconds(), r.concurrency().p95CompletionSeconds())
                        : Format.NA,
                r -> r.available() ? List.of(raw(r.concurrency().meanCompletionSeconds()), raw(r.concurrency().p95CompletionSeconds())) : List.of("", "")));
        c.add(concurrency("8× p95 TTFT ms¹", "concurrent8_p95_ttft_ms", x -> x.p95TtftMillis(), v -> String.format(Locale.ROOT, "%.0f", v)));
        return c;
    }

    /** The CSV: a header row, then one row per stage; speeds as median, min and max; the last field says why a stage is missing. */
    static List<String[]> csvHeaderAndRows(Report report) {
        List<Column> cols = of(report);
        List<String> header = new ArrayList<>();
        for (Column col : cols) header.addAll(col.csvNames());
        header.add("not_available");
        List<String[]> rows = new ArrayList<>();
        rows.add(header.toArray(String[]::new));
        for (StageResult r : report.stages()) {
            List<String> row = new ArrayList<>();
            for (Column col : cols) row.addAll(col.raw().apply(r));
            row.add(r.available() ? "" : r.unavailable());
            rows.add(row.toArray(String[]::new));
        }
        return rows;
    }

    private static Column speed(String header, String csv, Function<StageResult.Speed, Spread> f) {
        return new Column(header, List.of(csv + "_median", csv + "_min", csv + "_max"), true,
                r -> r.available() ? Format.spread(f.apply(r.speed())) : Format.NA, r -> {
                    if (!r.available()) return List.of("", "", "");
                    Spread s = f.apply(r.speed());
                    return List.of(raw(s.median()), raw(s.min()), raw(s.max()));
                });
    }

    private static Column bytes(String header, String csv, java.util.function.ToLongFunction<StageResult.Memory> f) {
        return Column.single(header, csv, true, r -> r.available() ? Format.mib(f.applyAsLong(r.memory())) : Format.NA,
                r -> r.available() && f.applyAsLong(r.memory()) >= 0 ? Long.toString(f.applyAsLong(r.memory())) : "");
    }

    private static Column quality(String header, String csv, java.util.function.ToDoubleFunction<StageResult.Quality> f,
                                  java.util.function.DoubleFunction<String> format) {
        return Column.single(header, csv, true, r -> r.available() ? format.apply(f.applyAsDouble(r.quality())) : Format.NA,
                r -> r.available() ? raw(f.applyAsDouble(r.quality())) : "");
    }

    private static Column concurrency(String header, String csv, java.util.function.ToDoubleFunction<StageResult.Concurrency> f,
                                      java.util.function.DoubleFunction<String> format) {
        return Column.single(header, csv, true, r -> r.available() ? format.apply(f.applyAsDouble(r.concurrency())) : Format.NA,
                r -> r.available() ? raw(f.applyAsDouble(r.concurrency())) : "");
    }

    /** A number as CSV and JSON write it: shortest round-trip form, empty when absent. */
    static String raw(double v) {
        return Double.isNaN(v) ? "" : Double.toString(v);
    }
}
