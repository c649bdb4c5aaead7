package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.eval.Evaluation;
import io.modelopt.core.eval.EvaluationModels;
import io.modelopt.core.eval.EvaluationTable;
import io.modelopt.core.json.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code modelopt evaluate --base MODEL --quant MODEL --text FILE}: how much a quantized model
 * lost against its base, as an aligned Markdown table (see {@link Evaluation}), optionally also
 * as JSON. The computation is core's; this command adds what only the process can see: how much
 * of each model's file mapping is resident, and the process's peak RSS.
 */
public final class EvaluateCommand implements Command {
    @Override public String name() { return "evaluate"; }

    @Override public String summary() { return "compare a quantized model with its base: perplexity, KL, greedy agreement, size"; }

    @Override public String usage() {
        return """
                usage: modelopt evaluate --base MODEL (--quant MODEL | --quantize METHOD [quantize options]) --text FILE [options]
                  --base MODEL          the reference model: a .gguf file or a Hugging Face model directory
                  --quant MODEL         the model to judge (same tokenizer), a .gguf file or HF directory
                  --quantize METHOD     instead of --quant: the base quantized in memory, as `quantize --method`
                                        does, with its --bits, --group-size, --symmetric, --clip-search, --calib,
                                        --samples, --seq-len, --seed, --act-order, --damp, --no-duo-scaling, --keep and --override
                                        (for schemes no file format holds, such as INT3, or INT4 beside ggml types)
                  --text FILE           UTF-8 text, tokenized as one string (with BOS as the tokenizer adds it)
                  --ctx N               tokens per window (default and maximum: the models' trained context length)
                  --chunks N            evaluate only the first N windows of each protocol (default: all)
                  --gen-tokens N        greedy tokens per prompt and model (default %d; 0 skips greedy agreement)
                  --prompts N           greedy prompts: the first N non-empty lines of the text (default %d),
                                        each its first %d tokens after BOS
                  --json FILE           also write every number as JSON
                  %s
                  --threads T           worker threads, shared by both models (default: all processors)
                  --kv f16|f32          KV cache element type (default f16, as llama.cpp)
                  --quiet               no progress on stderr
                Prints one table: perplexity of both models by llama.cpp's method (BOS at each window start,
                the second half of each window scored) and over non-overlapping windows (every next token
                scored), and the change; mean and max KL divergence base -> quant of the next-token
                distributions and top-1 agreement (llama.cpp's scored positions); greedy tokens until the
                first difference per prompt; bits per weight (whole model, and the blk.N 2-D weights alone),
                file bytes, and resident bytes: the runner's own count (weights, repacked copies, scratch)
                and the resident pages of the model file's mapping; the process's peak RSS (both models
                loaded) below it."""
                .formatted(Evaluation.Options.DEFAULT_NEW_TOKENS, Evaluation.Options.DEFAULT_PROMPTS, Evaluation.Options.DEFAULT_PROMPT_TOKENS,
                        CommandOptions.BACKEND_USAGE.strip());
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("base", "quant", "text", "ctx", "chunks", "gen-tokens", "prompts", "json", "threads", "kv", "backend",
                        "quantize", "bits", "group-size", "keep", "override", "calib", "samples", "seq-len", "seed", "damp"),
                Set.of("quiet", "symmetric", "clip-search", "act-order", "no-duo-scaling"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        if (args.has("quant") && args.has("quantize")) throw new Args.UsageException("give either --quant MODEL or --quantize METHOD, not both");
        if (!args.has("quant") && !args.has("quantize")) throw new Args.UsageException("missing required option --quant (or --quantize METHOD)");
        QuantizationSpec spec = args.has("quantize") ? inMemorySpec(args) : null;
        Path base = existing(args, "base"), quant = spec == null ? existing(args, "quant") : null, textFile = existing(args, "text");
        if (Files.isDirectory(textFile)) throw new Args.UsageException("--text " + textFile + " is a directory, not a text file");
        Evaluation.Options.Builder ob = Evaluation.Options.builder()
                .maxWindows(atLeast(args, "chunks", 0, 0))
                .newTokens(atLeast(args, "gen-tokens", Evaluation.Options.DEFAULT_NEW_TOKENS, 0))
                .prompts(atLeast(args, "prompts", Evaluation.Options.DEFAULT_PROMPTS, 0))
                .threads(CommandOptions.threads(args))
                .kvDtype(CommandOptions.kvDtype(args))
                .backend(CommandOptions.backend(args).name());
        if (args.has("ctx")) ob.contextLength(atLeast(args, "ctx", 0, 2));
        Evaluation.Options options = ob.build();
        Path json = args.has("json") ? Path.of(args.get("json", null)) : null;
        String text;
        try {
            text = Files.readString(textFile);
        } catch (CharacterCodingException e) {
            throw new Args.UsageException("--text " + textFile + " is not UTF-8 text");
        }

        ProgressListener progress = args.has("quiet") ? ProgressListener.NONE : new ProgressBar(err);
        long start = System.nanoTime();
        Evaluation.Result result;
        Optional<ProcessMemory.Mapped> baseMapped, quantMapped;
        Optional<String> calibration;
        try (EvaluationModels models = spec == null ? EvaluationModels.load(base, quant, options)
                : EvaluationModels.quantizeAndLoad(base, spec, options, progress)) {
            if (spec != null) err.printf(Locale.ROOT, "quantized %s in memory (%s) in %.1f s%n", base, spec, (System.nanoTime() - start) / 1e9);
            result = models.evaluate(text, progress);
            calibration = io.modelopt.quantization.calib.CalibratedModelQuantizer.calibrationRecord(models.quant().source().metadata());
            // while both are still loaded: the pages of each file the evaluation touched
            baseMapped = ProcessMemory.mappedFiles(modelFiles(base));
            quantMapped = spec == null ? ProcessMemory.mappedFiles(modelFiles(quant)) : Optional.empty();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        OptionalLong peak = ProcessMemory.peakRss();

        EvaluationTable table = result.table();
        if (baseMapped.isPresent() && quantMapped.isPresent()) {
            long b = baseMapped.get().rssBytes(), q = quantMapped.get().rssBytes();
            table.row("resident bytes, model file mapping (RSS of its pages)", String.format(Locale.ROOT, "%,d", b),
                    String.format(Locale.ROOT, "%,d", q), b > 0 ? String.format(Locale.ROOT, "%+.3f%%", 100.0 * q / b - 100) : "");
        }
        out.println("base:  " + base);
        out.println("quant: " + (spec == null ? quant : spec + ", quantized in memory"));
        calibration.ifPresent(c -> out.println("calibration: " + c));
        out.printf(Locale.ROOT, "text:  %s, %d tokens; context %d, KV %s, %d threads; %.1f s%n", textFile, result.tokens(), result.contextLength(),
                result.kvDtype().name().toLowerCase(Locale.ROOT), options.threads(), seconds);
        out.println();
        out.print(table.render());
        out.println();
        out.println(peak.isPresent()
                ? String.format(Locale.ROOT, "process peak RSS (both models loaded, JVM included): %,d bytes", peak.getAsLong())
                : "process peak RSS: n/a (no /proc)");

        if (json != null) {
            Map<String, Object> doc = new LinkedHashMap<>(result.toJson());
            calibration.ifPresent(c -> doc.put("calibration", c));
            Map<String, Object> process = new LinkedHashMap<>();
            baseMapped.ifPresent(m -> process.put("base_mapped_rss_bytes", m.rssBytes()));
            quantMapped.ifPresent(m -> process.put("quant_mapped_rss_bytes", m.rssBytes()));
            peak.ifPresent(v -> process.put("rss_peak_bytes", v));
            process.put("threads", options.threads());
            process.put("backend", options.backend());
            process.put("seconds", seconds);
            doc.put("process", process);
            writeAtomically(json, Json.writePretty(doc) + "\n");
            err.println("wrote " + json.toAbsolutePath());
        }
        return 0;
    }

    /** The spec of {@code --quantize METHOD} and quantize's options, checked as {@code quantize} checks them. */
    private static QuantizationSpec inMemorySpec(Args args) {
        String method = args.get("quantize", null).trim().toLowerCase(Locale.ROOT);
        boolean calibrated = method.equals("awq") || method.equals("gptq") || method.equals("awq+gptq");
        if (calibrated && !args.has("calib")) throw new Args.UsageException(method + " needs calibration text: --calib FILE (repeatable)");
        if (!calibrated && (args.has("calib") || args.has("samples") || args.has("seq-len") || args.has("seed"))) {
            throw new Args.UsageException("--calib, --samples, --seq-len and --seed apply to the calibrated methods (awq, gptq, awq+gptq), not " + method);
        }
        return QuantizeCommand.spec(args, method);
    }

    private static Path existing(Args args, String option) {
        Path p = Path.of(args.require(option));
        if (!Files.exists(p)) throw new Args.UsageException("--" + option + " " + p + ": no such file or directory");
        return p;
    }

    private static int atLeast(Args args, String name, int def, int min) {
        int v = args.getInt(name, def);
        if (v < min) throw new Args.UsageException("--" + name + " must be >= " + min + ", got " + v);
        return v;
    }

    /** The files a model's tensors are mapped from: the GGUF, or the directory's safetensors files. */
    private static List<Path> modelFiles(Path model) throws IOException {
        if (!Files.isDirectory(model)) return List.of(model);
        try (Stream<Path> s = Files.list(model)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".safetensors")).toList();
        }
    }

    /** Writes to a temporary file beside {@code target}, then moves it into place: never a half-written report. */
    private static void writeAtomically(Path target, String content) throws IOException {
        Path abs = target.toAbsolutePath();
        Path tmp = Files.createTempFile(abs.getParent(), abs.getFileName().toString(), ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
