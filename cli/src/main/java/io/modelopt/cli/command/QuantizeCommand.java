package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.quantization.gguf.GgufPreset;
import io.modelopt.quantization.gguf.GgufQuantizer;
import io.modelopt.quantization.gguf.ImatrixFile;
import java.io.PrintStream;
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
 * {@code modelopt quantize}: an F32/F16/BF16 GGUF model to a llama.cpp type or mixed preset,
 * byte for byte as {@code llama-quantize} writes it (optionally weighted by an importance matrix).
 * Our own formats (RTN INT8/INT4, AWQ, GPTQ) are not yet offered here.
 */
public final class QuantizeCommand implements Command {
    @Override public String name() { return "quantize"; }

    @Override public String summary() { return "quantize a GGUF model to a llama.cpp type or preset (q8_0, q4_0, q4_k_m, ...)"; }

    @Override public String usage() {
        return """
                usage: modelopt quantize --model MODEL.gguf --method PRESET --out OUT.gguf [--imatrix FILE] [--force]
                  --model PATH    an F32, F16 or BF16 GGUF model
                  --method NAME   %s
                                  (as llama-quantize's types: per-tensor choices and fallbacks included)
                  --imatrix FILE  llama-imatrix's importance matrix (legacy .imatrix format)
                  --out PATH      the GGUF file to write (written to a temporary name, then moved)
                  --force         overwrite PATH if it exists
                example: modelopt quantize --model brown-llama-f32.gguf --method q4_k_m --out brown-llama-q4_k_m.gguf""".formatted(
                Arrays.stream(GgufPreset.values()).map(p -> p.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")));
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) {
        Args args = Args.parse(argv, Set.of("model", "method", "imatrix", "out"), Set.of("force"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        if (!args.has("model")) throw new Args.UsageException("--model is required");
        if (!args.has("method")) throw new Args.UsageException("--method is required");
        if (!args.has("out")) throw new Args.UsageException("--out is required");
        Path model = Path.of(args.get("model", null)), output = Path.of(args.get("out", null));
        if (!Files.isRegularFile(model)) throw new IllegalArgumentException("no such model file: " + model);
        if (Files.exists(output) && !args.has("force")) throw new IllegalArgumentException(output + " exists; pass --force to overwrite it");
        GgufQuantizer q = GgufQuantizer.forPreset(args.get("method", null));
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
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        out.println(output.toAbsolutePath());
        return 0;
    }
}
