package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.ModelDescription;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.spi.ModelExporter;
import io.modelopt.quantization.gguf.GgufPreset;
import io.modelopt.quantization.gguf.GgufQuantizer;
import io.modelopt.quantization.gguf.ImatrixFile;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * {@code modelopt quantize}: a float model to a llama.cpp type or preset, or to our INT formats by
 * round to nearest ({@code rtn}) or calibrated ({@code awq}, {@code gptq}, {@code awq+gptq}), with
 * per-tensor rules.
 *
 * <p>Two paths. A GGUF preset with no rules and no {@code --format} other than gguf goes file to
 * file through {@link GgufQuantizer}, byte for byte as {@code llama-quantize} writes it
 * (optionally weighted by an importance matrix). Everything else builds a
 * {@link QuantizationSpec}, quantizes into memory and writes the result with the
 * {@link ModelExporter} registered for {@code --format} (gguf here; awq, gptq and
 * compressed-tensors with the HF exporters), which is looked up before any work.
 */
public final class QuantizeCommand implements Command {
    @Override public String name() { return "quantize"; }

    @Override public String summary() { return "quantize a model: llama.cpp types and presets (q8_0, q4_k_m, ...), rtn, or calibrated awq, gptq, awq+gptq, with per-tensor rules"; }

    @Override public String usage() {
        return """
                usage: modelopt quantize --model MODEL --method METHOD --out PATH [options]
                  --model PATH          an F32, F16 or BF16 model: a .gguf file or a Hugging Face directory
                  --method NAME         rtn (our INT formats, round to nearest), gptq, awq, awq+gptq (calibrated), or a llama.cpp type/preset:
                                        %s
                  --bits B              rtn/gptq/awq: 2, 3, 4 or 8 (default 4; 8 is per channel symmetric unless told)
                  --group-size G        rtn/gptq/awq: 32, 64, 128, or -1 for one group per row (default 128)
                  --symmetric           rtn/gptq/awq: no zero points (INT4 defaults to asymmetric, as AutoAWQ)
                  --clip-search         rtn: search each group's range for the lowest weight MSE; gptq, awq+gptq: the
                                        same search for each group GPTQ reaches (find_params with mse)
                  --calib FILE          awq, gptq, awq+gptq: calibration text (repeatable; *.ids/*.tokens: token ids)
                  --samples N           calibration sequences (default 128)
                  --seq-len L           tokens per sequence (default 512, capped at the model's context)
                  --seed S              of the random choice of sequences (default 0)
                  --act-order           gptq: columns in descending order of the Hessian's diagonal (static groups)
                  --damp D              gptq: dampening, a fraction of the Hessian's mean diagonal (default 0.01)
                  --no-duo-scaling      awq, awq+gptq: search the paper's x^a scales, not AutoAWQ's default x^a / w^(1-a)
                  --keep PATTERN        leave matching tensors as they are (repeatable)
                  --override PAT=TYPE   give matching tensors TYPE: keep, F16, F32, a ggml type (Q4_K, Q8_0...),
                                        or ours (INT8, INT4_G128, INT4_G32_SYM ...); repeatable, later rules win.
                                        PAT is a glob over tensor names (blk.*.attn_*, token_embd) or re:REGEX
                  --format NAME         gguf (default for llama.cpp methods), compressed-tensors (default for rtn), awq, gptq
                  --imatrix FILE        llama-imatrix's importance matrix (GGUF presets without rules)
                  --plan                print each tensor's target and the bits per weight, write nothing
                  --out PATH            the file or directory to write (written under a temporary name, then moved)
                  --force               overwrite PATH if it exists
                embeddings, norms and output (lm_head) stay at full precision for rtn; GGUF presets make
                llama-quantize's choices. A shape the format cannot take falls back to INT8 per channel (or is kept).
                examples:
                  modelopt quantize --model brown-llama-f32.gguf --method q4_k_m --out brown-llama-q4_k_m.gguf
                  modelopt quantize --model brown-llama-f32.gguf --method rtn --bits 4 --group-size 128 \\
                      --override 'blk.*.attn_*=INT8' --keep 'blk.0.*' --format compressed-tensors --out brown-llama-int4
                  modelopt quantize --model stories260K-f32.gguf --method rtn --group-size 32 --plan""".formatted(
                Arrays.stream(GgufPreset.values()).map(p -> p.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")));
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) {
        Args args = Args.parse(argv, Set.of("model", "method", "imatrix", "out", "bits", "group-size", "keep", "override", "format",
                        "calib", "samples", "seq-len", "seed", "damp"),
                Set.of("force", "symmetric", "clip-search", "plan", "act-order", "no-duo-scaling"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        if (!args.has("model")) throw new Args.UsageException("--model is required");
        if (!args.has("method")) throw new Args.UsageException("--method is required");
        boolean plan = args.has("plan");
        if (!args.has("out") && !plan) throw new Args.UsageException("--out is required");
        Path model = Path.of(args.get("model", null));
        Path output = args.has("out") ? Path.of(args.get("out", null)) : null;
        if (!Files.exists(model)) throw new IllegalArgumentException("no such model file: " + model);
        if (!plan && Files.exists(output) && !args.has("force")) throw new IllegalArgumentException(output + " exists; pass --force to overwrite it");
        String method = args.get("method", null).trim().toLowerCase(Locale.ROOT);
        boolean integer = method.equals("rtn") || method.equals("awq") || method.equals("gptq") || method.equals("awq+gptq");
        boolean rules = args.has("keep") || args.has("override");
        boolean rtnOptions = args.has("bits") || args.has("group-size") || args.has("symmetric") || args.has("clip-search")
                || args.has("act-order") || args.has("damp") || args.has("no-duo-scaling");
        if (!integer && rtnOptions) {
            throw new IllegalArgumentException("--bits, --group-size, --symmetric, --clip-search, --act-order, --damp and --no-duo-scaling apply to --method rtn, awq, gptq and awq+gptq, not " + method);
        }
        String format = args.get("format", integer ? "compressed-tensors" : "gguf").trim().toLowerCase(Locale.ROOT);
        boolean calibrated = integer && !method.equals("rtn");
        if (!calibrated && (args.has("calib") || args.has("samples") || args.has("seq-len") || args.has("seed"))) {
            throw new IllegalArgumentException("--calib, --samples, --seq-len and --seed apply to the calibrated methods (awq, gptq, awq+gptq), not " + method);
        }
        if (calibrated && !args.has("calib") && !plan) throw new Args.UsageException(method + " needs calibration text: --calib FILE (repeatable)");
        if (!integer && !rules && !plan && format.equals("gguf")) return llamaQuantize(args, model, output, err, out);
        if (args.has("imatrix")) throw new IllegalArgumentException("--imatrix applies to a GGUF preset without --keep/--override/--plan");
        if (!integer && !QuantizationSpec.GGUF_METHODS.contains(method)) {
            throw new IllegalArgumentException("unknown quantization method '" + method + "'; known: " + String.join(", ", QuantizationSpec.knownMethods()));
        }
        QuantizationSpec spec = spec(args, method);
        ModelExporter exporter = plan ? null : OptimizedModel.exporter(format); // fails now, naming the registered formats
        ProgressBar bar = new ProgressBar(err);
        long t0 = System.nanoTime();
        try (ModelOptimizer m = ModelOptimizer.load(model).withProgress(bar).quantize(spec)) {
            if (plan) {
                out.print(m.quantizationPlan());
                return 0;
            }
            try (ModelSource q = m.quantizeToSource()) {
                exporter.export(q, output, bar);
                ModelDescription d = ModelDescription.of(q);
                Map<String, Long> formats = d.parametersByFormat();
                err.printf(Locale.ROOT, "%s: %d tensors, formats %s; %.3f bits/weight whole model, %.3f block linears; %s -> %s (%s) in %.1f s%n",
                        spec, d.tensors().size(), formats.keySet(), d.bitsPerWeight(), d.blockLinearBitsPerWeight(), model, output, format,
                        (System.nanoTime() - t0) / 1e9);
            }
        }
        out.println(output.toAbsolutePath());
        return 0;
    }

    /** The spec of {@code --method} with {@code --bits}, {@code --group-size}, {@code --symmetric}, {@code --clip-search}, {@code --keep}, {@code --override} (also read by {@code bench --quantize}). */
    static QuantizationSpec spec(Args args, String method) {
        int bits = args.getInt("bits", 4);
        // --bits 8 alone means per-channel symmetric INT8 (the usual INT8), not INT4's g128 asymmetric defaults
        QuantizationSpec.Builder b = method.equals("rtn") && bits == 8 ? QuantizationSpec.int8() : QuantizationSpec.method(method);
        if (args.has("bits")) b.bits(bits);
        if (args.has("group-size")) b.groupSize(args.getInt("group-size", 128));
        if (args.has("symmetric")) b.symmetric(true);
        if (args.has("clip-search")) b.clipSearch(true);
        if (args.has("act-order")) b.actOrder(true);
        if (args.has("damp")) b.damp(Double.parseDouble(args.get("damp", null)));
        if (args.has("no-duo-scaling")) b.duoScaling(false);
        if (args.has("calib")) {
            List<Path> files = new java.util.ArrayList<>();
            for (Map.Entry<String, String> o : args.occurrences()) {
                if (o.getKey().equals("calib")) {
                    Path f = Path.of(o.getValue());
                    if (!Files.isRegularFile(f)) throw new IllegalArgumentException("no such calibration file: " + f);
                    files.add(f);
                }
            }
            b.calibration(new QuantizationSpec.CalibrationSpec(files, args.getInt("samples", 128), args.getInt("seq-len", 512),
                    Long.parseLong(args.get("seed", "0"))));
        }
        for (Map.Entry<String, String> o : args.occurrences()) {
            if (o.getKey().equals("keep")) b.keep(o.getValue());
            else if (o.getKey().equals("override")) b.rule(QuantizationSpec.LayerRule.parse(o.getValue()));
        }
        return b.build();
    }

    /** The llama-quantize path: file to file, byte-identical to its output. */
    private static int llamaQuantize(Args args, Path model, Path output, PrintStream err, PrintStream out) {
        if (!Files.isRegularFile(model)) throw new IllegalArgumentException("no such model file: " + model + " (GGUF presets read a .gguf file)");
        GgufQuantizer q;
        try {
            q = GgufQuantizer.forPreset(args.get("method", null));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; or rtn for our INT formats (awq and gptq need calibration)", e);
        }
        if (args.has("imatrix")) {
            Path im = Path.of(args.get("imatrix", null));
            if (!Files.isRegularFile(im)) throw new IllegalArgumentException("no such imatrix file: " + im);
            q.imatrix(ImatrixFile.read(im), im.toString());
        }
        q.listener(new ProgressBar(err));
        long t0 = System.nanoTime();
        List<GgufQuantizer.TensorPlan> plans = q.quantize(model, output);
        Map<String, Integer> types = new TreeMap<>();
        for (GgufQuantizer.TensorPlan p : plans) types.merge(p.type().name(), 1, Integer::sum);
        try {
            err.printf(Locale.ROOT, "%s: %d tensors %s, %.1f MB -> %.1f MB in %.1f s%n", q.preset(), plans.size(), types,
                    Files.size(model) / 1e6, Files.size(output) / 1e6, (System.nanoTime() - t0) / 1e9);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.println(output.toAbsolutePath());
        return 0;
    }
}
