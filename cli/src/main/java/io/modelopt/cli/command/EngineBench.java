package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.scheduler.Completion;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import io.modelopt.scheduler.EngineRequest;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.MetricsSnapshot;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ./modelopt bench --concurrency N}: the continuous-batching engine under N concurrent
 * requests of P-token prompts (the first T tokens shared) and G new tokens each, R requests in all.
 * Prints the aggregate decode rate as llama-batched-bench's S_TG counts it (tokens generated in
 * steps that schedule no prefill / the time of those steps), the end-to-end aggregate, per-request
 * decode tokens/s, TTFT and inter-token latency percentiles and the mean completion time, beside
 * the single-stream prefill rate of the same runner (the ceiling of a step of N decodes).
 */
final class EngineBench {
    private EngineBench() {}

    static final String USAGE = """
              --concurrency N    run the engine with N requests in flight (continuous batching); with it:
                --requests R       requests in all (default N)
                --shared-prefix T  the first T prompt tokens are the same in every request (prefix cache)
                --max-batched-tokens B  the engine's token budget per step (default max(256, P))
                --batch-invariant  bit-identical logits alone or in any batch (per-row kernels)
                --no-chunked-prefill  schedule each prompt whole
                --arrivals K --arrival-prompt-tokens P2 --arrival-interval-ms MS
                                   once the N requests decode, K more with P2-token prompts arrive one
                                   every MS ms (default 4, 512, 500): prints the running requests'
                                   worst and p99 inter-token gap while the late prompts prefill
            """;

    static int run(Args args, PrintStream out, PrintStream err) throws Exception {
        int n = positive(args, "concurrency", 1);
        int p = positive(args, "prompt-tokens", BenchCommand.DEFAULT_PROMPT);
        int g = positive(args, "gen-tokens", BenchCommand.DEFAULT_GEN);
        int requests = positive(args, "requests", n);
        int shared = Integer.parseInt(args.get("shared-prefix", "0"));
        if (shared < 0 || shared >= p) throw new Args.UsageException("--shared-prefix must be in [0, " + (p - 1) + "], got " + shared);
        int threads = positive(args, "threads", Runtime.getRuntime().availableProcessors());
        int arrivals = args.has("arrivals") ? positive(args, "arrivals", 4) : 0;
        int arrivalPrompt = positive(args, "arrival-prompt-tokens", 512), arrivalInterval = positive(args, "arrival-interval-ms", 500);
        int budget = positive(args, "max-batched-tokens", Math.max(256, p));
        if (!args.has("model")) throw new Args.UsageException("--concurrency needs --model FILE");
        Path modelPath = Path.of(args.get("model", null));
        Backend backend = CommandOptions.backend(args);
        try (ModelSource source = ModelSources.open(modelPath)) {
            int context = Math.max(p, arrivals > 0 ? arrivalPrompt : 0) + g;
            if (context > source.config().contextLength()) {
                throw new Args.UsageException("prompt + generated tokens (" + context + ") exceed the model's context length " + source.config().contextLength());
            }
            RunnerOptions options = RunnerOptions.builder().threads(threads).kvDtype(CommandOptions.kvDtype(args)).maxBatchTokens(Math.max(Math.max(budget, p), arrivals > 0 ? arrivalPrompt : 0))
                    .maxLogitsRows(n + arrivals).contextLength(context).batchInvariant(args.has("batch-invariant")).build();
            try (ModelRunner runner = backend.load(source, options)) {
                int vocab = runner.config().vocabSize(), bos = source.tokenizer().bosId();
                double prefill = singleStreamPrefill(runner, InferenceBench.prompt(p, vocab, bos, 99));
                EngineConfig config = EngineConfig.builder().maxNumSeqs(n + arrivals).maxBatchedTokens(budget).maxWaiting(Math.max(requests, 1) + arrivals)
                        .chunkedPrefill(!args.has("no-chunked-prefill")).kvBlocks((n + arrivals) * ((context + 15) / 16) + 16).kvBlockSize(16)
                        .metricsLogInterval(Duration.ZERO).build();
                List<int[]> prompts = new ArrayList<>();
                int[] prefix = InferenceBench.prompt(Math.max(shared, 1), vocab, bos, 7);
                for (int i = 0; i < requests; i++) {
                    int[] q = InferenceBench.prompt(p, vocab, bos, 1000 + i);
                    System.arraycopy(prefix, 0, q, 0, shared);
                    prompts.add(q);
                }
                if (arrivals > 0) {
                    try (Engine engine = Engine.start(runner, source.tokenizer(), config)) {
                        ArrivalScenario.run(out, engine, modelPath, vocab, bos, n, p, g, arrivals, arrivalPrompt, arrivalInterval, config);
                    }
                    return 0;
                }
                try (Engine engine = Engine.start(runner, source.tokenizer(), config)) {
                    // warm-up: a short batch through the same code paths
                    List<Future<EngineResult>> warm = new ArrayList<>();
                    for (int i = 0; i < n; i++) warm.add(engine.submit(request(InferenceBench.prompt(p, vocab, bos, 50 + i), Math.min(g, 4))).result());
                    for (Future<EngineResult> f : warm) f.get();
                    MetricsSnapshot before = engine.metrics();
                    long allocated = InferenceBench.allocatedBytes();
                    List<EngineResult> results = Collections.synchronizedList(new ArrayList<>());
                    AtomicInteger next = new AtomicInteger();
                    long t0 = System.nanoTime();
                    try (ExecutorService clients = Executors.newFixedThreadPool(n)) {
                        List<Future<?>> fs = new ArrayList<>();
                        for (int c = 0; c < n; c++) {
                            fs.add(clients.submit(() -> {
                                for (int i; (i = next.getAndIncrement()) < requests; ) results.add(engine.submit(request(prompts.get(i), g)).await());
                                return null;
                            }));
                        }
                        for (Future<?> f : fs) f.get();
                    }
                    long wall = System.nanoTime() - t0;
                    MetricsSnapshot after = engine.metrics();
                    long a1 = InferenceBench.allocatedBytes();
                    allocated = allocated < 0 || a1 < 0 ? -1 : a1 - allocated;
                    print(out, modelPath, n, p, g, requests, shared, threads, options.batchInvariant(), config, prefill, before, after, results, wall, allocated);
                }
            }
        }
        return 0;
    }

    static EngineRequest request(int[] prompt, int g) {
        // ignore EOS: every request generates exactly g tokens, as llama-batched-bench does
        return EngineRequest.builder().promptTokens(prompt).maxTokens(g).ignoreEos(true).build();
    }

    /** The runner's prefill tokens/s for one prompt on a contiguous cache (best of 3 after a warm-up). */
    private static double singleStreamPrefill(ModelRunner runner, int[] prompt) {
        try (KvCache cache = runner.newKvCache(1, runner.contextLength())) {
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 4; i++) {
                cache.clear(0);
                long t = System.nanoTime();
                runner.forward(Batch.ofSequence(0, 0, prompt, false), cache);
                if (i > 0) best = Math.min(best, System.nanoTime() - t);
            }
            return prompt.length * 1e9 / best;
        }
    }

    private static void print(PrintStream out, Path model, int n, int p, int g, int requests, int shared, int threads, boolean invariant, EngineConfig config,
                              double prefill, MetricsSnapshot before, MetricsSnapshot after, List<EngineResult> results, long wall, long allocated) {
        long tgTokens = after.decodeOnlyTokens() - before.decodeOnlyTokens(), tgNanos = after.decodeOnlyNanos() - before.decodeOnlyNanos();
        double aggregate = tgNanos == 0 ? 0 : tgTokens * 1e9 / tgNanos;
        long generated = 0;
        List<Double> ttft = new ArrayList<>(), itl = new ArrayList<>(), perRequest = new ArrayList<>(), e2e = new ArrayList<>();
        for (EngineResult r : results) {
            generated += r.completionTokens();
            ttft.add(r.ttftNanos() / 1e6);
            e2e.add(r.e2eNanos() / 1e6);
            for (Completion c : r.completions()) {
                long[] t = c.tokenNanos();
                for (int i = 1; i < t.length; i++) itl.add((t[i] - t[i - 1]) / 1e6);
                if (t.length > 1) perRequest.add((t.length - 1) * 1e9 / (t[t.length - 1] - t[0]));
            }
        }
        out.printf(Locale.ROOT, "engine bench: %s, %d threads, concurrency %d, %d requests of %d prompt tokens (%d shared) + %d generated, max %d batched tokens, chunked prefill %s%s%n",
                model.getFileName(), threads, n, requests, p, shared, g, config.maxBatchedTokens(), config.chunkedPrefill(), invariant ? ", batch-invariant" : "");
        out.printf(Locale.ROOT, "aggregate decode: %.1f tokens/s (%d tokens in %d steps without prefill, %.2f s; S_TG as llama-batched-bench counts it)%n",
                aggregate, tgTokens, after.decodeOnlySteps() - before.decodeOnlySteps(), tgNanos / 1e9);
        out.printf(Locale.ROOT, "single-stream prefill: %.1f tokens/s (one %d-token prompt, the ceiling of a step of %d decodes); aggregate / prefill = %.2f%n",
                prefill, p, n, aggregate / prefill);
        out.printf(Locale.ROOT, "end-to-end aggregate: %.1f tokens/s (%d generated tokens / %.2f s from the first submit to the last completion)%n",
                generated * 1e9 / wall, generated, wall / 1e9);
        out.printf(Locale.ROOT, "per-request decode: mean %.1f tokens/s%n", mean(perRequest));
        out.printf(Locale.ROOT, "TTFT ms: p50 %.1f  p95 %.1f  p99 %.1f%n", pct(ttft, 50), pct(ttft, 95), pct(ttft, 99));
        out.printf(Locale.ROOT, "ITL ms:  p50 %.1f  p95 %.1f  p99 %.1f  max %.1f%n", pct(itl, 50), pct(itl, 95), pct(itl, 99), pct(itl, 100));
        out.printf(Locale.ROOT, "completion: mean %.1f ms (min %.1f, max %.1f); preemptions %d, prefix-cache hit rate %.1f%%%n",
                mean(e2e), pct(e2e, 0), pct(e2e, 100), after.preemptions() - before.preemptions(), 100 * after.prefixCacheHitRate());
        // a kernel compiled with boxed vectors allocates megabytes per token (docs/PERFORMANCE.md, "A boxed compilation is a failed run")
        if (allocated >= 0 && generated > 0) {
            out.printf(Locale.ROOT, "engine alloc: %.0f B per generated token (heap, all threads, prefill and the engine's bookkeeping included)%n",
                    (double) allocated / generated);
        }
    }

    static double mean(List<Double> v) { return v.stream().mapToDouble(Double::doubleValue).average().orElse(0); }

    /** Nearest-rank percentile. */
    static double pct(List<Double> v, double q) {
        if (v.isEmpty()) return 0;
        double[] a = v.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        int i = (int) Math.ceil(q / 100 * a.length) - 1;
        return a[Math.max(0, Math.min(a.length - 1, i))];
    }

    private static int positive(Args args, String name, int def) {
        int v = args.has(name) ? Integer.parseInt(args.get(name, null)) : def;
        if (v < 1) throw new Args.UsageException("--" + name + " must be >= 1, got " + v);
        return v;
    }
}
