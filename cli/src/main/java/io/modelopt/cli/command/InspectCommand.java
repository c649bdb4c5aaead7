package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.ModelOptimizer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Set;

/**
 * {@code modelopt inspect MODEL}: what {@code ModelOptimizer.load(path).describe()} shows, each
 * tensor's weight format (a quantized weight's, e.g. {@code INT4_G128_ASYM}, with its scale and
 * zero-point parts) and the bits per weight of the whole model and of the block linears.
 */
public final class InspectCommand implements Command {
    @Override public String name() { return "inspect"; }

    @Override public String summary() { return "describe a model: architecture, dims, tensors and their formats, bits per weight, tokenizer"; }

    @Override public String usage() {
        return """
                usage: modelopt inspect MODEL
                  MODEL  a .gguf file or a Hugging Face model directory (quantized ones included)
                to see what quantizing would do to each tensor: modelopt quantize --model MODEL --method M ... --plan""";
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model"), Set.of());
        String model = args.has("model") ? args.get("model", null) : args.positionals().isEmpty() ? null : args.positionals().getFirst();
        if (model == null) throw new Args.UsageException("missing MODEL");
        try (ModelOptimizer m = ModelOptimizer.load(Path.of(model))) {
            out.print(m.describe());
        }
        return 0;
    }
}
