package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.ModelOptimizer;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Set;

/** {@code modelopt inspect MODEL}: what {@code ModelOptimizer.load(path).describe()} shows. */
public final class InspectCommand implements Command {
    @Override public String name() { return "inspect"; }

    @Override public String summary() { return "describe a model: architecture, dims, tensors, bytes, tokenizer"; }

    @Override public String usage() {
        return "usage: modelopt inspect MODEL\n  MODEL  a .gguf file or a Hugging Face model directory";
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
