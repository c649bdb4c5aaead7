package io.modelopt.cli.report;

import io.modelopt.cli.command.InferenceBench;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerMemory;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.eval.Evaluation;
import io.modelopt.core.eval.KlDivergence;
import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.VectorWidth;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the report: every chosen stage in turn, in one process on the same settings. Per stage:
 * make its model, bind it the way {@code modelopt bench} does (prompt-sized batch, one logits
 * row) and time warm-up then measured runs while the RSS is sampled; close it; then bind it again
 * for evaluation beside the baseline and compare their next-token distributions. Only one stage's
 * model is loaded while its memory is measured.
 */
public final class ReportRunner {
    private static final Logger LOG = LoggerFactory.getLogger(ReportRunner.class);
    /** Prompt token seed (as bench's, so the two see the same prompt). */
    private static final long PROMPT_SEED = 1234;
    /**
     * Warm-up lasts at least this long as well as --warmup runs (bench's rule): the first runs of a
     * format are interpreted code and JIT compilation, and a stage measured before the JIT has
     * finished its kernels looks several times slower than it is (micro F16 after one warm-up
     * run: 11 t/s, where the stage after it, warm, ran 68).
     */
    static final long MIN_WARM_UP_NANOS = 3_000_000_000L;
    /** ... but never more runs than this (a model so slow that 3 s is one run needs no more). */
    static final int MAX_WARM_UPS = 20;

    private final ReportOptions options;
    private final Path model;
    private final String modelName;
    private final Backend backend;
    private final ReportProgress progress;

    /**
     * @param model     the model file or directory (the synthetic one already generated)
     * @param modelName how the header names it
     */
    public ReportRunner(ReportOptions options, Path model, String modelName, Backend backend, ProgressListener progress) {
        this.options = options;
        this.model = model;
        this.modelName = modelName;
        this.backend = backend;
        this.progress = new ReportProgress(progress == null ? ProgressListener.NONE : progress, options.stages().size());
    }

    public Report run() {
        ModelConfig config;
        long parameters;
        GgmlType baselineType;
        EvalSet eval;
        try (ModelSource base = StageModels.openFile(model)) {
            config = base.config();
            parameters = base.tensors().values().stream().mapToLong(TensorData::elementCount).sum();
            baselineType = StageModels.dominantType(base.tensors());
            eval = evalSet(base);
        }
        int context = options.promptTokens() + options.genTokens();
        if (context > config.contextLength()) {
            throw new IllegalArgumentException("--prompt-tokens + --gen-tokens (" + context + ") exceed the model's context length " + config.contextLength());
        }
        if (eval.protocol().contextLength() > config.contextLength()) {
            throw new IllegalArgumentException("evaluation context " + eval.protocol().contextLength() + " exceeds the model's context length "
                    + config.contextLength());
        }
        boolean both = options.stages().contains(Stage.INT4) && options.stages().contains(Stage.INT4_KV8_ENGINE);
        int[] calib = calibrationSize();
        ConcurrentLoad load = new ConcurrentLoad(options.concurrentGenTokens());
        if (load.contextPerRequest() > config.contextLength()) {
            throw new IllegalArgumentException("the concurrent requests need " + load.contextPerRequest() + " positions, more than the model's context length "
                    + config.contextLength() + ": lower --concurrent-gen-tokens");
        }
        List<StageResult> results = new ArrayList<>();
        double[] basePerplexity = {Double.NaN};
        try (StageModels models = new StageModels(model, baselineType, options.method(), options.int4Bits(), options.int4GroupSize(), options.duoScaling(), options.calib(),
                calib[0], calib[1], both);
             RssSampler rss = new RssSampler()) {
            try (ModelSource base = StageModels.openFile(model)) {
                models.check(base, options.stages(), options.explicitInt4Shape());
            }
            ReportHeader header = header(parameters, eval, load, models, calib);
            int i = 0;
            for (Stage stage : options.stages()) {
                progress.stage(++i, stage);
                String why = models.unavailable(stage);
                if (why != null) {
                    progress.step("not available");
                    results.add(StageResult.unavailable(stage, models.configuration(stage), why));
                    continue;
                }
                results.add(measure(stage, models, config, parameters, eval, rss, basePerplexity, load));
            }
            return new Report(header, results, Recommendation.choose(results, options.bounds()));
        }
    }

    /**
     * Calibration samples and tokens: --calib-samples/--calib-tokens, else the 16 × 256,
     * except on the built-in synthetic model without --calib, where {@link ReportOptions#SYNTHETIC_CALIB_SAMPLES}
     * × {@link ReportOptions#SYNTHETIC_CALIB_TOKENS} keep the default report within its time (random
     * weights and random ids: more samples calibrate nothing better).
     */
    private int[] calibrationSize() {
        boolean synthetic = options.model() == null && options.calib() == null;
        int samples = options.calibSamples() > 0 ? options.calibSamples() : synthetic ? ReportOptions.SYNTHETIC_CALIB_SAMPLES : StageModels.CALIB_SAMPLES;
        int tokens = options.calibTokens() > 0 ? options.calibTokens() : synthetic ? ReportOptions.SYNTHETIC_CALIB_TOKENS : StageModels.CALIB_TOKENS;
        return new int[] {samples, tokens};
    }

    private StageResult measure(Stage stage, StageModels models, ModelConfig config, long parameters, EvalSet eval, RssSampler rss,
                                double[] basePerplexity, ConcurrentLoad load) {
        rss.beginStage();
        progress.step(stage == Stage.BASELINE ? "loading" : "making the model");
        try (StageModel m = models.open(stage, progress.as("quantizing"))) {
            long tensorBytes = m.tensorBytes();
            StageResult.Speed speed;
            long weightBytes, kvBytes, otherBytes;
            double kvPerToken;
            progress.step("loading");
            try (ModelRunner runner = backend.load(m.source(), speedOptions(m.kvDtype()));
                 KvCache cache = runner.newKvCache(1, options.promptTokens() + options.genTokens())) {
                speed = timeRuns(runner, cache, config, rss);
                RunnerMemory mem = runner.memory();
                weightBytes = mem.weightBytes();
                kvBytes = cache.byteSize();
                otherBytes = mem.scratchBytes();
                kvPerToken = cache.storage().layout().bytesPerToken();
            }
            boolean concurrent = stage == Stage.INT4_KV8_ENGINE;
            progress.step(concurrent ? "8 concurrent requests through the engine" : "8 requests one at a time");
            StageResult.Concurrency conc;
            try (ModelRunner runner = backend.load(m.source(), load.runnerOptions(options.threads(), m.kvDtype()))) {
                conc = load.measure(runner, m.source().tokenizer(), concurrent);
            }
            // the engine's stage holds its requests' KV in the block pool: that is the KV it needs
            if (concurrent) kvBytes = load.poolBytes(config, m.kvDtype(), true);
            RssSampler.Rss r = rss.endStage();
            StageResult.Memory memory = new StageResult.Memory(weightBytes, kvBytes, otherBytes, r.peakBytes(), r.steadyBytes(), kvPerToken);
            StageResult.Quality quality = quality(stage, m, eval, basePerplexity);
            double bpw = 8.0 * tensorBytes / parameters;
            LOG.info("stage {}: decode {} t/s, 8x {} t/s, {} bits/weight, KL {}", stage.number(), speed.decodePerSecond().median(), conc.tokensPerSecond(),
                    bpw, quality.meanKl());
            List<String> notes = new ArrayList<>(m.notes());
            if (concurrent) {
                notes.add(String.format(Locale.ROOT, "engine: prefix-cache hit rate %.0f %% of prompt blocks looked up (warm-up and measured rounds); "
                        + "KV column = the engine's pool, %d blocks of %d", 100 * conc.prefixHitRate(), load.kvBlocks(true), ConcurrentLoad.BLOCK_SIZE));
            }
            if (conc.generatedTokens() < (long) ConcurrentLoad.REQUESTS * load.genTokens()) {
                notes.add(conc.generatedTokens() + " of " + ConcurrentLoad.REQUESTS * load.genTokens() + " concurrent tokens generated (some requests ended at EOS)");
            }
            return new StageResult(stage, models.configuration(stage), null, speed, memory, bpw, quality, conc, notes);
        }
    }

    /** Options as {@code modelopt bench} binds a model: batches of the prompt, one logits row, context of one run. */
    private RunnerOptions speedOptions(KvDtype kv) {
        return RunnerOptions.builder().threads(options.threads()).kvDtype(kv).maxBatchTokens(options.promptTokens()).maxLogitsRows(1)
                .contextLength(options.promptTokens() + options.genTokens()).build();
    }

    /**
     * Options for evaluation. On a text: {@link RunnerOptions}' default batch limits, as {@code
     * modelopt perplexity} and core's EvaluationModels bind models, so the windows are batched
     * alike and the numbers equal those commands'. On random tokens: one window per batch, whose
     * logits buffers are a quarter the size; they live on the Java heap, whose pages stay
     * resident after use and would count in every later stage's RSS (small125m with the default
     * limits: +250 MiB from stage 2 on).
     */
    private static RunnerOptions evalOptions(KvDtype kv, int context, ComputePool pool, boolean text) {
        RunnerOptions.Builder b = RunnerOptions.builder().computePool(pool).kvDtype(kv).contextLength(context);
        if (!text) b.maxBatchTokens(context).maxLogitsRows(context);
        return b.build();
    }

    private StageResult.Speed timeRuns(ModelRunner runner, KvCache cache, ModelConfig config, RssSampler rss) {
        int[] ids = InferenceBench.prompt(options.promptTokens(), config.vocabSize(), config.bosTokenId(), PROMPT_SEED);
        Batch prompt = Batch.ofSequence(0, 0, ids, false);
        long warmStart = System.nanoTime();
        int warmUps = 0;
        while (warmUps < options.warmupRuns() || (options.warmupRuns() > 0 && System.nanoTime() - warmStart < MIN_WARM_UP_NANOS && warmUps < MAX_WARM_UPS)) {
            progress.count("warm-up run", Math.min(warmUps, options.warmupRuns()), options.warmupRuns());
            InferenceBench.run(runner, cache, prompt, options.genTokens(), null);
            warmUps++;
        }
        List<InferenceBench.Run> runs = new ArrayList<>();
        rss.beginSteady();
        for (int r = 0; r < options.runs(); r++) {
            progress.count("measured run", r, options.runs());
            runs.add(InferenceBench.run(runner, cache, prompt, options.genTokens(), null));
        }
        progress.count("measured run", options.runs(), options.runs());
        rss.endSteady();
        return new StageResult.Speed(warmUps, Spread.of(runs.stream().mapToDouble(InferenceBench.Run::ttftMillis).toArray()),
                Spread.of(runs.stream().mapToDouble(InferenceBench.Run::prefillTokensPerSecond).toArray()),
                Spread.of(runs.stream().mapToDouble(InferenceBench.Run::decodeTokensPerSecond).toArray()));
    }

    /**
     * The stage against the baseline on the evaluation set. The baseline needs no comparison with
     * itself; its perplexity (with --text) is what the others' change is relative to. With --text
     * the comparison is core's {@link Evaluation} (the numbers {@code modelopt evaluate} prints for
     * the same two models, context and windows); on synthetic tokens, core's {@link KlDivergence}.
     */
    private StageResult.Quality quality(Stage stage, StageModel m, EvalSet eval, double[] basePerplexity) {
        int ctx = eval.protocol().contextLength();
        try (ComputePool pool = new ComputePool(options.threads())) {
            if (stage == Stage.BASELINE) {
                if (eval.fromText()) {
                    try (ModelRunner runner = backend.load(m.source(), evalOptions(m.kvDtype(), ctx, pool, eval.fromText()))) {
                        basePerplexity[0] = Perplexity.evaluate(runner, eval.tokens(), eval.protocol(), progress.as("perplexity (windows)")).perplexity();
                    }
                }
                return StageResult.Quality.reference(eval.positions(), basePerplexity[0]);
            }
            try (ModelSource base = StageModels.openFile(model);
                 ModelRunner baseRunner = backend.load(base, evalOptions(KvDtype.F16, ctx, pool, eval.fromText()));
                 ModelRunner test = backend.load(m.source(), evalOptions(m.kvDtype(), ctx, pool, eval.fromText()))) {
                if (!eval.fromText()) {
                    KlDivergence.Result kl = KlDivergence.compare(baseRunner, test, eval.tokens(), eval.protocol(), progress.as("KL vs baseline (windows)"));
                    return new StageResult.Quality(kl.positions(), kl.meanKl(), kl.maxKl(), kl.top1Agreement(), Double.NaN, Double.NaN);
                }
                Evaluation.Options eo = Evaluation.Options.builder().contextLength(ctx).maxWindows(eval.protocol().maxWindows()).prompts(0).newTokens(0)
                        .threads(options.threads()).kvDtype(m.kvDtype()).build();
                Evaluation.Result r = Evaluation.run(new Evaluation.Subject("baseline", base, baseRunner), new Evaluation.Subject(stage.key(), m.source(), test),
                        eval.text(), eo, progress.as("perplexity and KL vs baseline"));
                if (Double.isNaN(basePerplexity[0])) basePerplexity[0] = r.base().llamaCpp().perplexity();
                return new StageResult.Quality(r.kl().positions(), r.kl().meanKl(), r.kl().maxKl(), r.kl().top1Agreement(),
                        r.quant().llamaCpp().perplexity(), r.llamaCppChangePercent());
            }
        }
    }

    private EvalSet evalSet(ModelSource base) {
        int trained = base.config().contextLength();
        if (options.text() == null) {
            int ctx = options.evalContext() > 0 ? options.evalContext() : Math.min(ReportOptions.SYNTHETIC_EVAL_CONTEXT, trained);
            int windows = options.evalWindows() > 0 ? options.evalWindows() : ReportOptions.SYNTHETIC_EVAL_WINDOWS;
            return EvalSet.synthetic(base.config().vocabSize(), base.config().bosTokenId(), ctx, windows);
        }
        // the trained context by default, as modelopt perplexity and evaluate
        int ctx = options.evalContext() > 0 ? options.evalContext() : trained;
        String text;
        try {
            text = Files.readString(options.text(), StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("--text " + options.text() + " is not UTF-8 text");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read --text " + options.text() + ": " + e.getMessage(), e);
        }
        return EvalSet.text(options.text().getFileName().toString(), text, base.tokenizer(), ctx, options.evalWindows());
    }

    private ReportHeader header(long parameters, EvalSet eval, ConcurrentLoad load, StageModels models, int[] calib) {
        List<String> method = new ArrayList<>();
        method.add(load.describe());
        if (models.method().calibrated() && (options.stages().contains(Stage.INT4) || options.stages().contains(Stage.INT4_KV8_ENGINE))) {
            boolean reduced = options.model() == null && options.calib() == null && options.calibSamples() == 0 && options.calibTokens() == 0;
            method.add(String.format(Locale.ROOT, "Calibration (%s): %d x %d tokens of %s%s.", models.method().key(), calib[0], calib[1],
                    options.calib() != null ? options.calib().getFileName() : "uniformly random token ids (seed " + StageModels.CALIB_SEED + ")",
                    reduced ? String.format(Locale.ROOT, ", reduced from the default %d x %d on the built-in synthetic model to keep the report "
                            + "within 5 minutes (random weights and ids: more samples calibrate nothing better)", StageModels.CALIB_SAMPLES,
                            StageModels.CALIB_TOKENS) : ""));
        }
        return new ReportHeader(modelName, parameters, options.promptTokens(), options.genTokens(), options.warmupRuns(), options.runs(),
                options.threads(), System.getProperty("java.vm.name") + " " + Runtime.version(), cpuModel(),
                KernelMode.DEFAULT.name().toLowerCase(Locale.ROOT), KernelMode.DEFAULT == KernelMode.VECTOR ? VectorWidth.bits() : 0,
                ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT)), eval.description(), method);
    }

    /** The CPU's model name from /proc/cpuinfo, or the OS architecture elsewhere. */
    static String cpuModel() {
        Path info = Path.of("/proc/cpuinfo");
        String arch = System.getProperty("os.arch") + ", " + Runtime.getRuntime().availableProcessors() + " processors";
        if (!Files.isReadable(info)) return arch;
        try (var lines = Files.lines(info, StandardCharsets.UTF_8)) {
            return lines.filter(l -> l.startsWith("model name")).findFirst()
                    .map(l -> l.substring(l.indexOf(':') + 1).trim() + " (" + arch + ")").orElse(arch);
        } catch (IOException | UncheckedIOException e) {
            return arch;
        }
    }
}
