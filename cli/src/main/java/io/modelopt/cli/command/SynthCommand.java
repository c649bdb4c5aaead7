package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.synthetic.SyntheticFormat;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticModelCache;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code modelopt synth}: writes a synthetic (random-weight) Llama model of a preset shape, as a
 * GGUF file or an HF directory, e.g. to benchmark against llama.cpp on the very same file.
 */
public final class SynthCommand implements Command {
    @Override public String name() { return "synth"; }

    @Override public String summary() { return "generate a synthetic random-weight Llama model (GGUF or HF) of a preset shape"; }

    @Override public String usage() {
        return """
                usage: modelopt synth [--preset NAME] [--type TYPE] [--format gguf|hf] [--seed N] [--out PATH] [--force]
                  --preset NAME   small125m (default), tiny1b (TinyLlama-1.1B shape) or micro
                  --type TYPE     f32, f16, q8_0 (default) or q4_0; hf takes f32 or f16 only.
                                  Quantized files are as llama-quantize --pure makes them (norms F32)
                  --format F      gguf (default) or hf (config.json + model.safetensors + tokenizer.json)
                  --seed N        random seed (default %d); the same seed gives the same bytes
                  --out PATH      file (gguf) or directory (hf) to write; default: the model cache
                                  (%s), where bench finds it
                  --force         overwrite PATH if it exists
                Prints the path written.""".formatted(SyntheticModel.DEFAULT_SEED, SyntheticModelCache.defaultDirectory());
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) {
        Args args = Args.parse(argv, Set.of("preset", "type", "format", "seed", "out"), Set.of("force"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        SyntheticSpec spec = SyntheticSpec.preset(args.get("preset", SyntheticSpec.SMALL_125M.name()));
        GgmlType type = SyntheticModel.parseType(args.get("type", "q8_0"));
        SyntheticFormat format = SyntheticFormat.parse(args.get("format", "gguf"));
        if (format == SyntheticFormat.HF && !SyntheticModel.HF_TYPES.contains(type)) {
            throw new Args.UsageException("--format hf takes --type f32 or f16, not " + type.name().toLowerCase(Locale.ROOT));
        }
        SyntheticModel model = SyntheticModel.of(spec, type, args.getLong("seed", SyntheticModel.DEFAULT_SEED));
        err.println("synthetic " + spec + ", " + type + ", seed " + model.seed() + ": " + String.format(Locale.ROOT, "%.1f MB of tensors",
                model.ggufTensorBytes() / 1e6));
        ProgressBar bar = new ProgressBar(err);
        Path written;
        if (args.has("out")) {
            written = Path.of(args.get("out", null));
            if (Files.exists(written) && !args.has("force")) {
                throw new IllegalArgumentException(written + " exists; pass --force to overwrite it");
            }
            Path parent = written.toAbsolutePath().getParent();
            if (parent != null) {
                try {
                    Files.createDirectories(parent);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException("cannot create folder " + parent + ": " + e.getMessage(), e);
                }
            }
            model.write(format, written, bar);
        } else {
            SyntheticModelCache cache = SyntheticModelCache.atDefaultLocation();
            if (cache.contains(model, format)) err.println("already in the cache");
            written = cache.get(model, format, bar);
        }
        out.println(written.toAbsolutePath());
        return 0;
    }
}
