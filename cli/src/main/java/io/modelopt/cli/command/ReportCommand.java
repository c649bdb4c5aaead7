package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.cli.report.Bounds;
import io.modelopt.cli.report.Int4Method;
import io.modelopt.cli.report.MarkdownTable;
import io.modelopt.cli.report.Report;
import io.modelopt.cli.report.ReportFiles;
import io.modelopt.cli.report.ReportOptions;
import io.modelopt.cli.report.ReportRunner;
import io.modelopt.cli.report.Stage;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code modelopt report}: the main job. Takes a model from its measured baseline through each
 * optimization on this machine in one run and prints the comparison table (speed, memory,
 * quality against the baseline) with a recommendation; writes the same as CSV, JSON and an SVG
 * chart. Without {@code --model} it makes its own F16 synthetic model, so it runs anywhere.
 */
public final class ReportCommand implements Command {
    /** Exit code when {@code --require} is given and no stage meets the bounds (1 and 2 mean failure and bad input). */
    public static final int EXIT_NO_STAGE_MEETS = 3;

    @Override public String name() { return "report"; }

    @Override public String summary() { return "the main job: baseline vs each optimization, measured here, as a table, CSV, JSON, SVG and a recommendation"; }

    @Override public String usage() {
        return """
                usage: modelopt report [--model PATH] [--text FILE] [--calib FILE] [--stages 1,2,3,4] [--method M]
                                       [--bits B] [--group-size G] [--calib-samples N] [--calib-tokens N]
                                       [--concurrent-gen-tokens N] [--prompt-tokens N] [--gen-tokens N] [--runs R] [--warmup W] [--threads T]
                                       [--out DIR] [--json FILE] [--memory-budget BYTES] [--max-ppl-increase PCT]
                                       [--max-kl NATS] [--require] [--quiet]
                  --model PATH           a .gguf file or HF directory; default: the built-in synthetic %s model in F16
                                         (random weights, generated into the cache on first use: no download)
                  --synthetic NAME       the built-in model's shape: small125m (default), tiny1b or micro; not with --model
                  --text FILE            evaluation text: perplexity per stage and KL on its tokens (default: random tokens)
                  --calib FILE           calibration text for the calibrated methods (awq, gptq, awq+gptq); without it
                                         they calibrate on seeded random token ids (and say so)
                  --calib-samples N      calibration sequences (default 16; 8 on the built-in model without --calib)
                  --calib-tokens N       tokens per calibration sequence (default 256; 128 on the built-in model without --calib)
                  --stages LIST          stages to run, e.g. 1,3 (default 1,2,3,4):
                                           1 baseline (F16/F32 weights as stored), 2 INT8 RTN per-channel,
                                           3 INT4 g128 (--method), 4 stage 3's weights + INT8 KV + the engine
                                           (continuous batching, prefix caching)
                  --method M             stages 3-4's INT4 method: %s
                                         (default awq when its quantizer is in the build, else gptq, else rtn)
                  --no-duo-scaling       awq, awq+gptq: the paper's x^a scales, not AutoAWQ's default x^a / w^(1-a)
                  --bits B               bits of stage 3's weights for rtn/awq/gptq (default 4)
                  --group-size G         their group size (default 128; must divide the rows: checked before any stage runs)
                  --concurrent-gen-tokens N  tokens each of the 8 concurrent requests generates (default %d)
                  --prompt-tokens N      prompt length for TTFT and prefill, one batch (default %d)
                  --gen-tokens N         greedy decode steps per run (default %d)
                  --runs R               measured runs per stage (default %d); median and min-max are reported
                  --warmup W             warm-up runs per stage before the measured ones (default %d)
                  --threads T            compute threads (default: all %d processors)
                  --ctx N                tokens per evaluation window (default: 128 without --text, else the trained context)
                  --chunks N             evaluation windows (default: 4 without --text, else all of the text)
                  --out DIR              folder for report.md, report.csv, report.json, report.svg (default %s/)
                  --json FILE            also write the JSON to FILE
                  --memory-budget BYTES  most weights + KV + other memory, e.g. 300000000, 512MiB, 2GB
                  --max-ppl-increase PCT most perplexity increase over the baseline, percent (needs --text)
                  --max-kl NATS          most mean KL divergence from the baseline, nats
                  --require              exit %d when no stage meets the bounds (default: say so and exit 0)
                  --quiet                no progress display and no log lines (the table is still printed)
                  %s
                Recommends the fastest stage (decode tokens/s) that meets the bounds and says why each other
                stage was not chosen; without quality bounds a stage must have mean KL <= %s nats and top-1 >= %.0f %%.
                A stage whose quantizer is not in this build is listed as not available, with what it needs.
                example: modelopt report --stages 1,3 --method q4_k_m --runs 3 --max-kl 0.1 --out /tmp/report"""
                .formatted(SyntheticSpec.SMALL_125M.name(), Int4Method.names(), ReportOptions.CONCURRENT_GEN_TOKENS, ReportOptions.DEFAULT_PROMPT, ReportOptions.DEFAULT_GEN,
                        ReportOptions.DEFAULT_RUNS, ReportOptions.DEFAULT_WARMUP, Runtime.getRuntime().availableProcessors(),
                        ReportOptions.DEFAULT_OUT, EXIT_NO_STAGE_MEETS, CommandOptions.BACKEND_USAGE.strip(), Bounds.DEFAULT_MAX_KL,
                        100 * Bounds.DEFAULT_MIN_TOP1);
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "synthetic", "text", "calib", "stages", "method", "prompt-tokens", "gen-tokens", "runs",
                "warmup", "threads", "ctx", "chunks", "bits", "group-size", "calib-samples", "calib-tokens", "concurrent-gen-tokens", "out", "json", "memory-budget", "max-ppl-increase", "max-kl", "backend"), Set.of("require", "quiet", "no-duo-scaling"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        boolean quiet = args.has("quiet");
        if (quiet && System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // effective when nothing has logged yet in this process (the CLI); the report's own lines obey --quiet anyway
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        ReportOptions options = options(args);
        Backend backend = CommandOptions.backend(args);
        if (options.model() != null && !Files.exists(options.model())) throw new IllegalArgumentException("no such model file: " + options.model());
        for (Path p : new Path[] {options.text(), options.calib()}) {
            if (p != null && !Files.isRegularFile(p)) throw new IllegalArgumentException("no such file: " + p);
        }
        ProgressListener progress = quiet ? ProgressListener.NONE : new ProgressBar(err);

        Path model;
        String modelName;
        if (options.model() != null) {
            model = options.model();
            modelName = model.toString();
        } else {
            SyntheticSpec spec = SyntheticSpec.preset(options.syntheticPreset());
            SyntheticModel synthetic = SyntheticModel.of(spec, GgmlType.F16, SyntheticModel.DEFAULT_SEED);
            SyntheticModelCache cache = SyntheticModelCache.atDefaultLocation();
            if (!cache.contains(synthetic, SyntheticFormat.GGUF) && !quiet) {
                err.println("report: generating the built-in " + spec.name() + " F16 model (once) into " + cache.directory());
            }
            model = cache.get(synthetic, SyntheticFormat.GGUF, progress);
            modelName = "synthetic " + spec.name() + " F16 (random weights, " + model.getFileName() + ")";
        }

        long start = System.nanoTime();
        Report report = new ReportRunner(options, model, modelName, backend, progress).run();
        out.print(MarkdownTable.document(report));
        List<Path> files = ReportFiles.write(report, options.out());
        if (options.json() != null) files.add(ReportFiles.write(options.json(), io.modelopt.cli.report.JsonWriter.write(report)));
        if (!quiet) {
            for (Path f : files) err.println("report: wrote " + f);
            err.printf(Locale.ROOT, "report: %d stages in %.1f s%n", report.stages().size(), (System.nanoTime() - start) / 1e9);
        }
        if (report.recommendation().chosen().isEmpty() && options.require()) {
            err.println("report: no stage meets the bounds (--require): " + report.recommendation().rule());
            return EXIT_NO_STAGE_MEETS;
        }
        return 0;
    }

    static ReportOptions options(Args args) {
        if (args.has("model") && args.has("synthetic")) throw new Args.UsageException("--synthetic chooses the built-in model; it does not apply with --model");
        ReportOptions.Builder b = ReportOptions.builder();
        if (args.has("model")) b.model(Path.of(args.get("model", null)));
        if (args.has("synthetic")) {
            String name = args.get("synthetic", null);
            if (SyntheticSpec.presets().stream().noneMatch(s -> s.name().equals(name))) {
                throw new Args.UsageException("unknown --synthetic '" + name + "' (one of "
                        + String.join(", ", SyntheticSpec.presets().stream().map(SyntheticSpec::name).toList()) + ")");
            }
            b.syntheticPreset(name);
        }
        if (args.has("text")) b.text(Path.of(args.get("text", null)));
        if (args.has("calib")) b.calib(Path.of(args.get("calib", null)));
        if (args.has("stages")) b.stages(Stage.parseList(args.get("stages", null)));
        if (args.has("method")) b.method(Int4Method.parse(args.get("method", null)));
        if (args.has("no-duo-scaling")) {
            Int4Method m = args.has("method") ? Int4Method.parse(args.get("method", null)) : null;
            if (m != null && m != Int4Method.AWQ && m != Int4Method.AWQ_GPTQ) {
                throw new Args.UsageException("--no-duo-scaling applies to --method awq and awq+gptq, not " + args.get("method", null));
            }
            b.duoScaling(false);
        }
        if ((args.has("bits") || args.has("group-size")) && args.has("method") && Int4Method.parse(args.get("method", null)) == Int4Method.Q4_K_M) {
            throw new Args.UsageException("--bits and --group-size apply to rtn, awq and gptq; q4_k_m fixes its own types");
        }
        if (args.has("bits")) {
            int bits = args.getInt("bits", ReportOptions.DEFAULT_INT4_BITS);
            if (bits != 2 && bits != 3 && bits != 4 && bits != 8) throw new Args.UsageException("--bits must be 2, 3, 4 or 8, got " + bits);
            b.int4Bits(bits);
        }
        if (args.has("group-size")) {
            int g = args.getInt("group-size", ReportOptions.DEFAULT_GROUP_SIZE);
            try {
                // the spec's own rule (32, 64, 128 or per channel), before anything is loaded
                io.modelopt.core.QuantizationSpec.int4().groupSize(g).build();
            } catch (IllegalArgumentException e) {
                throw new Args.UsageException("--group-size: " + e.getMessage());
            }
            b.int4GroupSize(g);
        }
        if (args.has("calib-samples")) b.calibSamples(atLeast(args, "calib-samples", 0, 1));
        if (args.has("calib-tokens")) b.calibTokens(atLeast(args, "calib-tokens", 0, 2));
        b.concurrentGenTokens(atLeast(args, "concurrent-gen-tokens", ReportOptions.CONCURRENT_GEN_TOKENS, 1));
        b.promptTokens(atLeast(args, "prompt-tokens", ReportOptions.DEFAULT_PROMPT, 1));
        b.genTokens(atLeast(args, "gen-tokens", ReportOptions.DEFAULT_GEN, 1));
        b.runs(atLeast(args, "runs", ReportOptions.DEFAULT_RUNS, 1));
        b.warmupRuns(atLeast(args, "warmup", ReportOptions.DEFAULT_WARMUP, 0));
        b.threads(CommandOptions.threads(args));
        if (args.has("ctx")) b.evalContext(atLeast(args, "ctx", 0, 2));
        if (args.has("chunks")) b.evalWindows(atLeast(args, "chunks", 0, 1));
        if (args.has("out")) b.out(Path.of(args.get("out", null)));
        if (args.has("json")) b.json(Path.of(args.get("json", null)));
        long budget = args.has("memory-budget") ? bytes(args.get("memory-budget", null)) : -1;
        double ppl = args.has("max-ppl-increase") ? nonNegative(args, "max-ppl-increase") : Double.NaN;
        double kl = args.has("max-kl") ? nonNegative(args, "max-kl") : Double.NaN;
        if (!Double.isNaN(ppl) && !args.has("text")) throw new Args.UsageException("--max-ppl-increase needs --text (perplexity is measured on a text)");
        b.bounds(new Bounds(budget, ppl, kl));
        b.require(args.has("require")).quiet(args.has("quiet"));
        return b.build();
    }

    private static int atLeast(Args args, String name, int def, int min) {
        int v = args.getInt(name, def);
        if (v < min) throw new Args.UsageException("--" + name + " must be >= " + min + ", got " + v);
        return v;
    }

    private static double nonNegative(Args args, String name) {
        double v = args.getDouble(name, 0);
        if (!(v >= 0) || Double.isInfinite(v)) throw new Args.UsageException("--" + name + " must be a number >= 0, got '" + args.get(name, "") + "'");
        return v;
    }

    private static final Pattern BYTES = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(|b|kb|mb|gb|kib|mib|gib)", Pattern.CASE_INSENSITIVE);

    /** {@code 300000000}, {@code 512MiB}, {@code 2GB}: bytes, binary (KiB, MiB, GiB) or decimal (KB, MB, GB) units. */
    static long bytes(String text) {
        Matcher m = BYTES.matcher(text.trim());
        if (!m.matches()) throw new Args.UsageException("--memory-budget must be bytes, e.g. 300000000, 512MiB or 2GB; got '" + text + "'");
        double unit = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "kb" -> 1e3;
            case "mb" -> 1e6;
            case "gb" -> 1e9;
            case "kib" -> 1024.0;
            case "mib" -> 1024.0 * 1024;
            case "gib" -> 1024.0 * 1024 * 1024;
            default -> 1;
        };
        double v = Double.parseDouble(m.group(1)) * unit;
        if (v < 1 || v > Long.MAX_VALUE / 2.0) throw new Args.UsageException("--memory-budget must be at least 1 byte, got '" + text + "'");
        return (long) v;
    }
}
