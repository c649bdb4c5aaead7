/*
 * A bounded load test of `./modelopt serve` (or any OpenAI-compatible server): C concurrent
 * streaming clients send R completion requests in all (a fixed number: it stops by itself), then it
 * reads /metrics. JDK only, run as a single source file:
 *
 *   java scripts/ServeLoad.java --url http://127.0.0.1:8000 [--clients 32] [--requests 64]
 *        [--prompt-tokens 64] [--max-tokens 64] [--warmup 2] [--model NAME] [--api-key KEY] [--json FILE]
 *
 * Each request is a streamed /v1/completions of a distinct prompt given as token ids (ids 10..499,
 * seeded per request: every vocabulary here has at least 512 tokens, and no two prompts share a
 * prefix block) with ignore_eos, so each generates exactly --max-tokens tokens. A 429 (queue full)
 * is counted and retried after the Retry-After it came with, until the request is served; anything else that is not a clean
 * stream ending in [DONE] is an error. Client side it records the time to the first token chunk and
 * the gaps between chunks; server side it reads the engine's TTFT and inter-token histograms and
 * the KV blocks still in use (0 expected once every request ended).
 *
 * Prints one summary; exits 1 when any request failed or a block is still in use, else 0.
 * scripts/serve-load.sh runs it against the 125M synthetic model (docs/SERVER.md).
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class ServeLoad {
    record Outcome(int status, long ttftNanos, List<Long> gapsNanos, long tokens, long totalNanos, String error) {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = args(argv);
        URI base = URI.create(a.getOrDefault("url", "http://127.0.0.1:8000"));
        int clients = Integer.parseInt(a.getOrDefault("clients", "32"));
        int requests = Integer.parseInt(a.getOrDefault("requests", Integer.toString(clients * 2)));
        int promptTokens = Integer.parseInt(a.getOrDefault("prompt-tokens", "64"));
        int maxTokens = Integer.parseInt(a.getOrDefault("max-tokens", "64"));
        String model = a.get("model");
        String key = a.get("api-key");
        int warmups = Integer.parseInt(a.getOrDefault("warmup", "2"));
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
        // warm-up requests, one at a time and not counted: the server's JIT compiles the kernels meanwhile;
        // the histograms below are the difference of /metrics after and before the measured run
        for (int w = 0; w < warmups; w++) {
            Outcome o = one(http, base, key, model, -1 - w, promptTokens, maxTokens);
            if (o.error != null || o.status != 200) throw new IllegalStateException("warm-up request failed: " + o.status + " " + o.error);
        }
        String before = waitForFreeBlocks(http, base, key);

        List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger next = new AtomicInteger(), rejections = new AtomicInteger();
        long t0 = System.nanoTime();
        try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                fs.add(pool.submit(() -> {
                    for (int i; (i = next.getAndIncrement()) < requests; ) {
                        Outcome o;
                        // a 429 is retried (after its Retry-After) until the request is served: every request runs once
                        while ((o = one(http, base, key, model, i, promptTokens, maxTokens)).status == 429) rejections.incrementAndGet();
                        outcomes.add(o);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get();
        }
        long wall = System.nanoTime() - t0;

        String metrics = waitForFreeBlocks(http, base, key);
        List<Double> ttft = new ArrayList<>(), itl = new ArrayList<>();
        int ok = 0, rejected = rejections.get(), errors = 0;
        long tokens = 0;
        Map<String, Integer> errorKinds = new TreeMap<>();
        for (Outcome o : outcomes) {
            if (o.error == null && o.status == 200) {
                ok++;
                tokens += o.tokens;
                ttft.add(o.ttftNanos / 1e6);
                for (long g : o.gapsNanos) itl.add(g / 1e6);
            } else {
                errors++;
                errorKinds.merge(o.status + " " + o.error, 1, Integer::sum);
            }
        }
        int blocksUsed = (int) gauge(metrics, "modelopt_kv_blocks_used");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("url", base.toString());
        r.put("clients", clients);
        r.put("requests", requests);
        r.put("prompt_tokens", promptTokens);
        r.put("max_tokens", maxTokens);
        r.put("ok", ok);
        r.put("rejected_429", rejected);
        r.put("errors", errors);
        r.put("wall_s", wall / 1e9);
        r.put("generated_tokens", tokens);
        r.put("aggregate_tokens_per_s", tokens * 1e9 / wall);
        r.put("client_ttft_ms", percentiles(ttft));
        r.put("client_itl_ms", percentiles(itl));
        r.put("warmup_requests", warmups);
        r.put("server_ttft_ms", histogramPercentiles(before, metrics, "modelopt_time_to_first_token_seconds"));
        r.put("server_itl_ms", histogramPercentiles(before, metrics, "modelopt_inter_token_latency_seconds"));
        r.put("server_requests_rejected", gauge(metrics, "modelopt_requests_total{outcome=\"rejected\"}") - gauge(before, "modelopt_requests_total{outcome=\"rejected\"}"));
        r.put("server_requests_cancelled", gauge(metrics, "modelopt_requests_total{outcome=\"cancelled\"}") - gauge(before, "modelopt_requests_total{outcome=\"cancelled\"}"));
        r.put("kv_blocks_used_after", blocksUsed);
        r.put("kv_blocks_free_after", (int) gauge(metrics, "modelopt_kv_blocks_free"));

        System.out.printf(Locale.ROOT, "serve load: %d clients, %d requests of %d prompt tokens + %d generated, %s%n", clients, requests, promptTokens, maxTokens, base);
        System.out.printf(Locale.ROOT, "  %d ok, %d rejections (429, each retried), %d errors %s; %.1f s; %d tokens, %.1f tokens/s aggregate%n", ok, rejected, errors,
                errorKinds.isEmpty() ? "" : errorKinds.toString(), wall / 1e9, tokens, tokens * 1e9 / wall);
        System.out.printf(Locale.ROOT, "  client TTFT ms %s%n  client ITL ms  %s%n", r.get("client_ttft_ms"), r.get("client_itl_ms"));
        System.out.printf(Locale.ROOT, "  /metrics TTFT ms (bucket upper bounds) %s%n  /metrics ITL ms  (bucket upper bounds) %s%n", r.get("server_ttft_ms"), r.get("server_itl_ms"));
        System.out.printf(Locale.ROOT, "  KV blocks after: %d used, %d free%n", blocksUsed, (int) gauge(metrics, "modelopt_kv_blocks_free"));
        if (a.containsKey("json")) Files.writeString(Path.of(a.get("json")), json(r) + "\n");
        System.exit(errors == 0 && blocksUsed == 0 ? 0 : 1);
    }

    /** One streamed request; never throws. */
    static Outcome one(HttpClient http, URI base, String key, String model, int index, int promptTokens, int maxTokens) {
        SplittableRandom rnd = new SplittableRandom(1000 + index);
        StringBuilder ids = new StringBuilder();
        for (int i = 0; i < promptTokens; i++) ids.append(i == 0 ? "" : ",").append(10 + rnd.nextInt(490));
        String body = "{" + (model == null ? "" : "\"model\":\"" + model + "\",") + "\"prompt\":[" + ids + "],\"max_tokens\":" + maxTokens
                + ",\"temperature\":0,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/v1/completions")).timeout(Duration.ofMinutes(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) b.header("Authorization", "Bearer " + key);
        long start = System.nanoTime();
        try {
            HttpResponse<java.io.InputStream> resp = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            if (resp.statusCode() != 200) {
                String text = new String(resp.body().readAllBytes(), StandardCharsets.UTF_8);
                if (resp.statusCode() == 429) {
                    // a polite client: wait as long as Retry-After says before its next request
                    long wait = resp.headers().firstValue("Retry-After").map(Long::parseLong).orElse(1L);
                    Thread.sleep(Math.min(5, Math.max(0, wait)) * 1000);
                }
                return new Outcome(resp.statusCode(), -1, List.of(), 0, System.nanoTime() - start, resp.statusCode() == 429 ? null : text);
            }
            long first = -1, last = -1, tokens = -1;
            List<Long> gaps = new ArrayList<>();
            boolean done = false;
            Pattern usage = Pattern.compile("\"completion_tokens\":(\\d+)");
            try (BufferedReader in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (!line.startsWith("data: ")) continue;
                    long now = System.nanoTime();
                    if (line.equals("data: [DONE]")) { done = true; break; }
                    if (line.contains("\"error\"")) return new Outcome(200, -1, List.of(), 0, now - start, "error event: " + line);
                    Matcher m = usage.matcher(line);
                    if (line.contains("\"choices\":[]") && m.find()) { tokens = Long.parseLong(m.group(1)); continue; }
                    if (line.contains("\"finish_reason\":null")) { // a token's chunk (the last chunk of a choice carries its finish reason)
                        if (first < 0) first = now;
                        else gaps.add(now - last);
                        last = now;
                    }
                }
            }
            if (!done) return new Outcome(200, -1, List.of(), 0, System.nanoTime() - start, "stream ended without [DONE]");
            return new Outcome(200, first - start, gaps, tokens, System.nanoTime() - start, tokens == maxTokens ? null : "usage said " + tokens + " tokens");
        } catch (IOException | InterruptedException e) {
            return new Outcome(-1, -1, List.of(), 0, System.nanoTime() - start, e.toString());
        }
    }

    /** /metrics once the engine reports no block in use (its gauge updates every loop turn), or after 10 s. */
    static String waitForFreeBlocks(HttpClient http, URI base, String key) throws Exception {
        String m = "";
        for (int i = 0; i < 100; i++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/metrics")).timeout(Duration.ofSeconds(10));
            if (key != null) b.header("Authorization", "Bearer " + key);
            m = http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body();
            if (gauge(m, "modelopt_kv_blocks_used") == 0) return m;
            Thread.sleep(100);
        }
        return m;
    }

    static double gauge(String metrics, String series) {
        for (String line : metrics.split("\n")) if (line.startsWith(series + " ")) return Double.parseDouble(line.substring(series.length() + 1));
        return Double.NaN;
    }

    /** p50/p90/p99 of a Prometheus histogram between two scrapes, as the upper bound of the bucket each falls in (ms). */
    static Map<String, Object> histogramPercentiles(String before, String after, String name) {
        TreeMap<Double, Double> cumulative = buckets(after, name);
        buckets(before, name).forEach((le, c) -> cumulative.merge(le, -c, Double::sum));
        Map<String, Object> out = new LinkedHashMap<>();
        double count = cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
        out.put("count", (long) count);
        for (double q : new double[] {0.5, 0.9, 0.99}) {
            double bound = Double.NaN;
            for (var e : cumulative.entrySet()) if (e.getValue() >= q * count) { bound = e.getKey(); break; }
            out.put("p" + (int) Math.round(q * 100) + "_le", Double.isInfinite(bound) ? "+Inf" : bound * 1000);
        }
        return out;
    }

    static TreeMap<Double, Double> buckets(String metrics, String name) {
        TreeMap<Double, Double> cumulative = new TreeMap<>();
        Pattern p = Pattern.compile(Pattern.quote(name) + "_bucket\\{le=\"([^\"]+)\"\\} (\\S+)");
        for (String line : metrics.split("\n")) {
            Matcher m = p.matcher(line);
            if (m.matches()) cumulative.put(m.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)));
        }
        return cumulative;
    }

    static Map<String, Object> percentiles(List<Double> v) {
        Map<String, Object> out = new LinkedHashMap<>();
        double[] s = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        out.put("count", s.length);
        for (double q : new double[] {50, 90, 99, 100}) {
            double x = s.length == 0 ? 0 : s[Math.max(0, Math.min(s.length - 1, (int) Math.ceil(q / 100 * s.length) - 1))];
            out.put(q == 100 ? "max" : "p" + (int) q, Math.round(x * 10) / 10.0);
        }
        return out;
    }

    static String json(Object v) {
        if (v instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            for (var e : m.entrySet()) sb.append(sb.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":").append(json(e.getValue()));
            return sb.append('}').toString();
        }
        if (v instanceof String s) return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        if (v instanceof Double d && (d.isNaN() || d.isInfinite())) return "null";
        return String.valueOf(v);
    }

    static Map<String, String> args(String[] argv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) throw new IllegalArgumentException("usage: --name value pairs; bad '" + argv[i] + "'");
            m.put(argv[i].substring(2), argv[++i]);
        }
        return m;
    }
}
