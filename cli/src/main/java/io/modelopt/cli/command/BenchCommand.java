package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerMemory;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.kvcache.BlockManager;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * {@code modelopt bench}: prefill and decode speed of a model on the CPU, with the memory it
 * holds. Without {@code --model} it runs the built-in synthetic {@code small125m} model
 * (generated into the cache on first use), so the command works on any machine out of the box;
 * the prompt/generation lengths default to llama-bench's {@code -p 128 -n 64} so the two can be
 * set side by side on the same GGUF file.
 */
public final class BenchCommand implements Command {
    static final int DEFAULT_PROMPT = 128, DEFAULT_GEN = 64, DEFAULT_RUNS = 3;
    private static final long PROMPT_SEED = 1234;
    /** Warm-up runs continue until this much time has passed and {@link #MIN_WARM_UPS} runs are done. */
    static final long WARM_UP_NANOS = 3_000_000_000L;
    /**
     * At least this many warm-up runs: the first run of a model is mostly interpreted code and JIT
     * compilation and can take the whole 3 s by itself, so that the measured runs came after one
     * prefill only and the JIT was still compiling the prefill path (small125m, 64 decode steps:
     * prefill 930 t/s over runs 1-3, 1069 over runs 1-12).
     */
    static final int MIN_WARM_UPS = 3;

    @Override public String name() { return "bench"; }

    @Override public String summary() { return "measure prefill (TTFT) and decode speed and memory, like llama-bench"; }

    @Override public String usage() {
        return """
                usage: modelopt bench [--model MODEL] [--prompt-tokens N] [--gen-tokens N] [--threads T] [--runs R]
                                      [--type q8_0|q4_0|f16|f32] [--seed S] [--json FILE] [--backend NAME]
                                      [--quantize METHOD [--bits B] [--group-size G] [--symmetric] ...]
                                      [--kv-cache TYPE] [--kv-budget B] [--kv-paged | --kv-compare]
                  --model MODEL      a .gguf file or HF directory; default: the built-in synthetic small125m
                                     model (134M parameters, random weights, made in the cache on first use)
                  --type TYPE        weight type of the built-in model (default q8_0); not with --model
                  --seed S           seed of the built-in model (default %d)
                  --prompt-tokens N  prompt length, prefilled as one batch (default %d)
                  --gen-tokens N     greedy decode steps after the prompt (default %d)
                  --threads T        compute threads (default: all %d processors)
                  --runs R           measured runs after warm-up runs (at least 3, and at least 3 s in all) (default %d)
                  --json FILE        also write the figures as JSON
                  --kv-cache TYPE    KV element type: f16 (default), f32, bf16, int8, fp8
                  --kv-budget B      KV memory (512MiB, or a fraction such as 0.3): the paged pool's blocks
                  --kv-paged         run on paged KV storage (blocks from the block manager) instead of
                                     the contiguous cache
                  --kv-compare       run each measured run on both, alternating (contiguous then paged, then
                                     paged then contiguous, ...) in this one process, and print the paged
                                     runs and the paged/contiguous decode ratio of each pair
                  --kv-block-size N  tokens per block with --kv-paged: a power of two from 8 to 256 (default 16)
                  --kv-prefix N      paged, prefix caching on: every run's prompt shares its first N tokens
                                     (cached by the warm-up), the rest is new; TTFT then prefills only the rest
                  --backend NAME     where the model runs: cpu (default), or a backend module on the class path
                  --quantize METHOD  quantize the model in memory first, as `quantize --method` does (rtn, q4_0, ...),
                                     with its --bits, --group-size, --symmetric, --clip-search, --keep, --override
                %s
                Prints TTFT (time to the prompt's last logits), prefill and decode tokens/s as median (min-max)
                over the runs, weight and KV cache bytes, and memory: peak/current RSS, Java heap, and how much
                of the model file's mapping is resident (weights used in place, not copied)."""
                .formatted(SyntheticModel.DEFAULT_SEED, DEFAULT_PROMPT, DEFAULT_GEN, Runtime.getRuntime().availableProcessors(), DEFAULT_RUNS, EngineBench.USAGE.strip());
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        if (java.util.Arrays.asList(argv).contains("--concurrency")) {
            return EngineBench.run(Args.parse(argv, Set.of("model", "prompt-tokens", "gen-tokens", "threads", "backend", "kv-cache", "concurrency", "requests",
                    "shared-prefix", "max-batched-tokens", "arrivals", "arrival-prompt-tokens", "arrival-interval-ms"), Set.of("batch-invariant", "no-chunked-prefill")), out, err);
        }
        Args args = Args.parse(argv, Set.of("model", "prompt-tokens", "gen-tokens", "threads", "runs", "type", "seed", "json", "backend",
                "quantize", "bits", "group-size", "keep", "override", "kv", "kv-cache", "kv-budget", "kv-block-size", "kv-prefix"), Set.of("symmetric", "clip-search", "kv-paged", "kv-compare"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        int promptTokens = positive(args, "prompt-tokens", DEFAULT_PROMPT, 1);
        int genTokens = positive(args, "gen-tokens", DEFAULT_GEN, 0);
        int threads = positive(args, "threads", Runtime.getRuntime().availableProcessors(), 1);
        int runs = positive(args, "runs", DEFAULT_RUNS, 1);
        Backend backend = CommandOptions.backend(args);
        if (args.has("model") && (args.has("type") || args.has("seed"))) {
            throw new Args.UsageException("--type and --seed choose the built-in synthetic model; they do not apply with --model");
        }

        Path modelPath;
        String modelName;
        if (args.has("model")) {
            modelPath = Path.of(args.get("model", null));
            modelName = modelPath.getFileName().toString();
        } else {
            GgmlType type = SyntheticModel.parseType(args.get("type", "q8_0"));
            SyntheticModel synthetic = SyntheticModel.of(SyntheticSpec.SMALL_125M, type, args.getLong("seed", SyntheticModel.DEFAULT_SEED));
            SyntheticModelCache cache = SyntheticModelCache.atDefaultLocation();
            if (!cache.contains(synthetic, SyntheticFormat.GGUF)) {
                err.println("generating the built-in benchmark model (once) into " + cache.directory());
            }
            modelPath = cache.get(synthetic, SyntheticFormat.GGUF, new ProgressBar(err));
            modelName = "synthetic " + SyntheticSpec.SMALL_125M.name() + " " + type.name().toLowerCase(Locale.ROOT) + " (" + modelPath.getFileName() + ")";
        }

        Map<String, Object> report;
        long loadStart = System.nanoTime();
        try (ModelSource opened = ModelSources.open(modelPath); ModelSource source = quantized(args, opened, modelPath, err)) {
            ModelConfig config = source.config();
            int context = promptTokens + genTokens;
            if (context > config.contextLength()) {
                throw new Args.UsageException("prompt + generated tokens (" + context + ") exceed the model's context length " + config.contextLength());
            }
            KvDtype kv = CommandOptions.kvDtype(args);
            KvBudget.Plan plan = CommandOptions.kvPlan(args, config, kv, context);
            int sharedPrefix = args.getInt("kv-prefix", 0);
            if (sharedPrefix < 0 || sharedPrefix >= promptTokens) throw new Args.UsageException("--kv-prefix must be in [0, --prompt-tokens), got " + sharedPrefix);
            boolean paged = args.has("kv-paged") || sharedPrefix > 0;
            // --kv-compare: both layouts, one pair of runs per measured run, in alternating order, so the
            // ratio of each pair is taken under the same machine load and JIT state (docs/KVCACHE.md)
            boolean compare = args.has("kv-compare");
            if (compare && paged) throw new Args.UsageException("--kv-compare runs both layouts; drop --kv-paged and --kv-prefix");
            RunnerOptions options = RunnerOptions.builder().threads(threads).maxBatchTokens(promptTokens).maxLogitsRows(1)
                    .contextLength(context).kvDtype(kv).build();
            // paged: a pool of the budget's blocks (or just enough for the run), sequence 0 in blocks handed out by the block manager
            int blockSize = args.getInt("kv-block-size", 16);
            try {
                BlockManager.checkBlockSize(blockSize);
            } catch (IllegalArgumentException e) {
                throw new Args.UsageException("--kv-block-size: " + e.getMessage());
            }
            if (plan != null && blockSize != 16) throw new Args.UsageException("--kv-budget plans blocks of 16 tokens; drop --kv-block-size or the budget");
            int poolBlocks = plan != null ? plan.numBlocks() : (context + blockSize - 1) / blockSize;
            try (ModelRunner runner = backend.load(source, options); KvCache cache = runner.newKvCache(1, paged ? 1 : context);
                 KvStorage pool = paged || compare ? runner.newKvStorage(poolBlocks, blockSize) : null) {
                BlockManager blocks = paged || compare ? BlockManager.builder().numBlocks(poolBlocks).blockSize(blockSize).kvDtype(kv).prefixCaching(sharedPrefix > 0).build() : null;
                // --kv-prefix N: every run's prompt starts with the same N tokens (cached after the first run), then differs
                long loadNanos = System.nanoTime() - loadStart;
                int[] ids = InferenceBench.prompt(promptTokens, config.vocabSize(), config.bosTokenId(), PROMPT_SEED);
                int[] runIds = ids.clone();
                java.util.SplittableRandom tails = new java.util.SplittableRandom(PROMPT_SEED + 1);
                Batch prompt = Batch.ofSequence(0, 0, ids, false);

                err.printf(Locale.ROOT, "bench: %s, %d threads, prompt %d, generate %d, %d runs after warm-up%n", modelName, threads, promptTokens, genTokens, runs);
                // warm-up runs until WARM_UP_NANOS have passed and MIN_WARM_UPS are done: the JIT compiles
                // the kernels in the background, and measuring before it has finished shows boxed vectors
                long warmStart = System.nanoTime();
                int warmUps = 0;
                do {
                    if (paged || compare) InferenceBench.runPaged(runner, pool, blocks, nextPrompt(runIds, sharedPrefix, tails, config.vocabSize()), genTokens, null);
                    if (!paged) InferenceBench.run(runner, cache, prompt, genTokens, null);
                    warmUps++;
                } while ((System.nanoTime() - warmStart < WARM_UP_NANOS || warmUps < MIN_WARM_UPS) && warmUps < 20);
                List<InferenceBench.Run> measured = new ArrayList<>(), comparedPaged = new ArrayList<>();
                for (int r = 0; r < runs; r++) {
                    InferenceBench.Run run, pagedRun = null;
                    if (paged) {
                        run = InferenceBench.runPaged(runner, pool, blocks, nextPrompt(runIds, sharedPrefix, tails, config.vocabSize()), genTokens, null);
                    } else if (!compare) {
                        run = InferenceBench.run(runner, cache, prompt, genTokens, null);
                    } else if (r % 2 == 0) { // contiguous first in even pairs, paged first in odd ones
                        run = InferenceBench.run(runner, cache, prompt, genTokens, null);
                        pagedRun = InferenceBench.runPaged(runner, pool, blocks, runIds, genTokens, null);
                    } else {
                        pagedRun = InferenceBench.runPaged(runner, pool, blocks, runIds, genTokens, null);
                        run = InferenceBench.run(runner, cache, prompt, genTokens, null);
                    }
                    measured.add(run);
                    err.printf(Locale.ROOT, "  run %d: TTFT %.1f ms, prefill %.1f t/s, decode %.1f t/s%s%n", r + 1, run.ttftMillis(),
                            run.prefillTokensPerSecond(), run.decodeTokensPerSecond(), compare
                                    ? String.format(Locale.ROOT, "; paged: TTFT %.1f ms, decode %.1f t/s (%.3f)", pagedRun.ttftMillis(), pagedRun.decodeTokensPerSecond(),
                                            pagedRun.decodeTokensPerSecond() / run.decodeTokensPerSecond()) : "");
                    if (compare) comparedPaged.add(pagedRun);
                }
                report = report(modelPath, modelName, source, runner, cache, options, promptTokens, genTokens, runs, loadNanos, measured);
                report.put("warm_up_runs", warmUps);
                var kvLayout = io.modelopt.core.kv.KvLayout.of(config.numLayers(), config.numKvHeads(), config.headDim(), poolBlocks, blockSize, kv);
                report.put("kv_cache_layout", paged ? "paged" : compare ? "contiguous and paged, alternating" : "contiguous");
                report.put("kv_bytes_per_token", kvLayout.bytesPerToken());
                if (compare) report.put("kv_compare", compared(measured, comparedPaged));
                if (paged || compare) {
                    report.put("kv_cache_blocks", poolBlocks);
                    report.put("kv_block_size", blockSize);
                    report.put("kv_cache_bytes", pool.byteSize());
                }
                if (plan != null) report.put("kv_budget_bytes", plan.budgetBytes());
                if (sharedPrefix > 0) {
                    report.put("kv_shared_prefix_tokens", sharedPrefix);
                    report.put("kv_prefix_hit_tokens", blocks.stats().hitTokens());
                }
                if (args.has("quantize")) report.put("quantized_in_memory", source.metadata().getOrDefault("modelopt.quantization", args.get("quantize", null)).toString());
            }
        }
        print(report, out);
        if (args.has("json")) {
            Path json = Path.of(args.get("json", null));
            Files.writeString(json, Json.writePretty(report) + "\n", StandardCharsets.UTF_8);
            err.println("wrote " + json.toAbsolutePath());
        }
        return 0;
    }

    /** The paged runs of {@code --kv-compare} and the paged/contiguous ratios of each pair. */
    private static Map<String, Object> compared(List<InferenceBench.Run> contiguous, List<InferenceBench.Run> paged) {
        double[] ratios = new double[paged.size()];
        for (int i = 0; i < ratios.length; i++) ratios[i] = paged.get(i).decodeTokensPerSecond() / contiguous.get(i).decodeTokensPerSecond();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("paged_ttft_ms", stats(InferenceBench.Stats.of(paged, InferenceBench.Run::ttftMillis)));
        m.put("paged_decode_tokens_per_s", stats(InferenceBench.Stats.of(paged, InferenceBench.Run::decodeTokensPerSecond)));
        m.put("paged_over_contiguous_decode", stats(InferenceBench.Stats.of(ratios)));
        return m;
    }

    /** {@code ids} with the tokens after the shared prefix drawn anew (all of {@code ids} when nothing is shared). */
    private static int[] nextPrompt(int[] ids, int sharedPrefix, java.util.SplittableRandom r, int vocab) {
        if (sharedPrefix == 0) return ids;
        for (int i = sharedPrefix; i < ids.length; i++) ids[i] = r.nextInt(vocab);
        return ids;
    }

    /**
     * With {@code --quantize METHOD} (and quantize's {@code --bits}, {@code --group-size}, ...): the
     * model quantized in memory through the facade's quantizer, so our INT formats and the GGUF types
     * can be benchmarked without writing them out; otherwise {@code opened} itself (the try block closes
     * both, and closing it twice is harmless only for the quantized one, hence the wrapper).
     */
    private static ModelSource quantized(Args args, ModelSource opened, Path modelPath, PrintStream err) {
        if (!args.has("quantize")) return new Unclosed(opened);
        io.modelopt.core.QuantizationSpec spec = QuantizeCommand.spec(args, args.get("quantize", null).toLowerCase(Locale.ROOT));
        err.println("quantizing " + modelPath.getFileName() + " in memory: " + spec);
        long t0 = System.nanoTime();
        ModelSource q = io.modelopt.core.ModelOptimizer.quantizer(spec).quantize(opened, spec, new ProgressBar(err));
        err.printf(Locale.ROOT, "quantized in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        return q;
    }

    /** A view of a source that the caller closes itself. */
    private record Unclosed(ModelSource s) implements ModelSource {
        @Override public Path path() { return s.path(); }
        @Override public String format() { return s.format(); }
        @Override public io.modelopt.core.model.ModelConfig config() { return s.config(); }
        @Override public io.modelopt.core.tokenizer.Tokenizer tokenizer() { return s.tokenizer(); }
        @Override public Map<String, io.modelopt.core.tensor.TensorData> tensors() { return s.tensors(); }
        @Override public Map<String, Object> metadata() { return s.metadata(); }
        @Override public String fileTensorName(String canonicalName) { return s.fileTensorName(canonicalName); }
        @Override public void close() {}
    }

    private static int positive(Args args, String name, int def, int min) {
        int v = args.getInt(name, def);
        if (v < min) throw new Args.UsageException("--" + name + " must be >= " + min + ", got " + v);
        return v;
    }

    /** Every figure, measured while the model is still loaded (so the mapping and RSS are those of the running model). */
    private static Map<String, Object> report(Path modelPath, String modelName, ModelSource source, ModelRunner runner, KvCache cache,
                                              RunnerOptions options, int promptTokens, int genTokens, int runs, long loadNanos,
                                              List<InferenceBench.Run> measured) throws IOException {
        ModelConfig c = source.config();
        long tensorBytes = 0;
        Map<String, Long> bytesByType = new TreeMap<>();
        for (TensorData t : source.tensors().values()) {
            tensorBytes += t.byteSize();
            bytesByType.merge(t.type().name(), t.byteSize(), Long::sum);
        }
        RunnerMemory memory = runner.memory();
        long repacked = memory.repackedBytes();
        // a full GC first, so "heap used" is the live heap the model and runner keep, not garbage
        System.gc();
        Runtime rt = Runtime.getRuntime();
        long heapUsed = rt.totalMemory() - rt.freeMemory();
        Optional<ProcessMemory.Mapped> mapped = ProcessMemory.mappedFiles(modelFiles(modelPath));
        OptionalLong rss = ProcessMemory.rss(), peak = ProcessMemory.peakRss();

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("model", modelName);
        r.put("model_path", modelPath.toAbsolutePath().toString());
        r.put("format", source.format());
        r.put("architecture", c.architecture().toString());
        r.put("parameters", parameterCount(source));
        r.put("weight_bytes", tensorBytes + repacked);
        r.put("tensor_bytes", tensorBytes);
        r.put("repacked_bytes", repacked);
        r.put("tensor_bytes_by_type", bytesByType);
        r.put("threads", options.threads());
        r.put("kernel_mode", options.kernelMode().toString());
        r.put("prompt_tokens", promptTokens);
        r.put("gen_tokens", genTokens);
        r.put("runs", runs);
        r.put("load_ms", loadNanos / 1e6);
        r.put("ttft_ms", stats(InferenceBench.Stats.of(measured, InferenceBench.Run::ttftMillis)));
        r.put("prefill_tokens_per_s", stats(InferenceBench.Stats.of(measured, InferenceBench.Run::prefillTokensPerSecond)));
        if (genTokens > 0) {
            r.put("decode_tokens_per_s", stats(InferenceBench.Stats.of(measured, InferenceBench.Run::decodeTokensPerSecond)));
            double alloc = InferenceBench.Stats.of(measured, InferenceBench.Run::decodeAllocatedBytesPerToken).median();
            if (alloc >= 0) r.put("decode_allocated_bytes_per_token", alloc);
        }
        r.put("kv_cache_bytes", cache.byteSize());
        r.put("runner_scratch_bytes", memory.scratchBytes());
        r.put("kv_cache_dtype", cache.dtype().toString());
        r.put("kv_cache_positions", promptTokens + genTokens);
        peak.ifPresent(v -> r.put("rss_peak_bytes", v));
        rss.ifPresent(v -> r.put("rss_bytes", v));
        r.put("heap_used_bytes", heapUsed);
        r.put("heap_committed_bytes", rt.totalMemory());
        mapped.ifPresent(m -> {
            r.put("model_mapped_rss_bytes", m.rssBytes());
            r.put("model_mapped_bytes", m.sizeBytes());
        });
        r.put("cpus", rt.availableProcessors());
        r.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        r.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        return r;
    }

    private static Map<String, Object> stats(InferenceBench.Stats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("median", s.median());
        m.put("min", s.min());
        m.put("max", s.max());
        m.put("values", s.values());
        return m;
    }

    private static long parameterCount(ModelSource source) {
        long n = 0;
        for (TensorData t : source.tensors().values()) n += t.elementCount();
        return n;
    }

    /** The files a model's tensors are mapped from: the GGUF, or the directory's safetensors files. */
    private static List<Path> modelFiles(Path model) throws IOException {
        if (!Files.isDirectory(model)) return List.of(model);
        try (Stream<Path> s = Files.list(model)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).toList();
        }
    }

    @SuppressWarnings("unchecked")
    private static void print(Map<String, Object> r, PrintStream out) {
        out.printf(Locale.ROOT, "model        %s%n", r.get("model"));
        out.printf(Locale.ROOT, "             %s %s, %.1fM parameters%n", r.get("format"), r.get("architecture"), ((Number) r.get("parameters")).longValue() / 1e6);
        StringBuilder types = new StringBuilder();
        ((Map<String, Long>) r.get("tensor_bytes_by_type")).forEach((t, b) -> types.append(types.isEmpty() ? "" : ", ").append(t).append(' ').append(mb(b)));
        out.printf(Locale.ROOT, "weights      %s (%s; repacked copies %s)%n", mb((Long) r.get("weight_bytes")), types, mb((Long) r.get("repacked_bytes")));
        out.printf(Locale.ROOT, "setup        %d threads (%s kernels), prompt %d tokens, %d decode steps, %d runs after %s warm-up; load %.0f ms%n",
                r.get("threads"), r.get("kernel_mode"), r.get("prompt_tokens"), r.get("gen_tokens"), r.get("runs"), r.getOrDefault("warm_up_runs", 1), (Double) r.get("load_ms"));
        out.printf(Locale.ROOT, "%-12s %10s   %s%n", "", "median", "(min - max)");
        line(out, "TTFT", "ms", (Map<String, Object>) r.get("ttft_ms"));
        line(out, "prefill", "t/s", (Map<String, Object>) r.get("prefill_tokens_per_s"));
        if (r.containsKey("decode_tokens_per_s")) line(out, "decode", "t/s", (Map<String, Object>) r.get("decode_tokens_per_s"));
        if (r.get("kv_compare") instanceof Map<?, ?> c) {
            line(out, "TTFT paged", "ms", (Map<String, Object>) c.get("paged_ttft_ms"));
            line(out, "decode paged", "t/s", (Map<String, Object>) c.get("paged_decode_tokens_per_s"));
            Map<String, Object> ratio = (Map<String, Object>) c.get("paged_over_contiguous_decode");
            out.printf(Locale.ROOT, "%-12s %10.3f      (%.3f - %.3f) paged/contiguous decode, per alternating pair%n", "paged/contig",
                    (Double) ratio.get("median"), (Double) ratio.get("min"), (Double) ratio.get("max"));
        }
        if (r.containsKey("decode_allocated_bytes_per_token")) {
            out.printf(Locale.ROOT, "%-12s %10.0f B/token (heap, all threads, median)%n", "decode alloc", (Double) r.get("decode_allocated_bytes_per_token"));
        }
        out.printf(Locale.ROOT, "KV cache     %s (%s, %d positions)%n", mb((Long) r.get("kv_cache_bytes")), r.get("kv_cache_dtype"), r.get("kv_cache_positions"));
        if (r.containsKey("kv_bytes_per_token")) {
            out.printf(Locale.ROOT, "KV layout    %s, %,.0f bytes/token%s%n", r.get("kv_cache_layout"), (Double) r.get("kv_bytes_per_token"),
                    r.containsKey("kv_cache_blocks") ? String.format(Locale.ROOT, ", %,d blocks of %d tokens", (Integer) r.get("kv_cache_blocks"), (Integer) r.get("kv_block_size")) : "");
        }
        String rss = r.containsKey("rss_peak_bytes")
                ? "RSS peak " + mb((Long) r.get("rss_peak_bytes")) + ", now " + mb((Long) r.get("rss_bytes"))
                : "RSS n/a (no /proc)";
        out.printf(Locale.ROOT, "memory       %s; Java heap live %s of %s committed%n", rss, mb((Long) r.get("heap_used_bytes")), mb((Long) r.get("heap_committed_bytes")));
        if (r.containsKey("model_mapped_rss_bytes")) {
            boolean repacked = ((Long) r.get("repacked_bytes")) > 0;
            out.printf(Locale.ROOT, "             model file mapping resident %s of %s mapped (%s)%n",
                    mb((Long) r.get("model_mapped_rss_bytes")), mb((Long) r.get("model_mapped_bytes")),
                    repacked ? "repacked matrices decode from their copies; the copied file pages are released where prefill reads the copy too (Q4_0, Q8_0, F16), kept where it reads the file (Q4_K); the file serves embeddings and row tails" : "weights read in place");
        }
    }

    private static void line(PrintStream out, String what, String unit, Map<String, Object> s) {
        out.printf(Locale.ROOT, "%-12s %10.1f %-4s (%.1f - %.1f)%n", what, (Double) s.get("median"), unit, (Double) s.get("min"), (Double) s.get("max"));
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }
}
