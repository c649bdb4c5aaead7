package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.PrintStream;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code modelopt perplexity --model MODEL --text FILE}: perplexity of a model on a text file,
 * by llama-perplexity's protocol (default) or the GPTQ/AWQ papers' non-overlapping windows.
 * Progress on stderr; the last stdout line is {@code perplexity: <value>}.
 */
public final class PerplexityCommand implements Command {
    @Override public String name() { return "perplexity"; }

    @Override public String summary() { return "perplexity of a model on a text file (llama.cpp or windows method)"; }

    @Override public String usage() {
        return """
                usage: modelopt perplexity --model MODEL --text FILE [options]
                  --model MODEL         a .gguf file or a Hugging Face model directory
                  --text FILE           UTF-8 text, tokenized as one string (with BOS as the tokenizer adds it)
                  --ctx N               tokens per window (default and maximum: the model's trained context length)
                  --method M            llama.cpp (default): llama-perplexity's protocol, BOS at each window
                                        start, the second half of each window scored;
                                        windows: non-overlapping windows as they are, every next token
                                        scored (the GPTQ/AWQ papers' protocol)
                  --chunks N            evaluate only the first N windows (default: all)
                  %s
                  --threads T           worker threads (default: all processors)
%s
                Prints tokens, windows, scored tokens, mean NLL, the +/- llama.cpp prints and seconds;
                the last line is "perplexity: <value>". Progress goes to stderr.""".formatted(CommandOptions.BACKEND_USAGE.strip(), CommandOptions.KV_USAGE);
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "text", "ctx", "method", "chunks", "threads", "kv", "kv-cache", "kv-budget", "backend"), Set.of());
        Path model = Path.of(args.require("model"));
        Path textFile = Path.of(args.require("text"));
        String method = args.get("method", "llama.cpp").toLowerCase(Locale.ROOT);
        if (!method.equals("llama.cpp") && !method.equals("windows")) {
            throw new Args.UsageException("--method must be llama.cpp or windows, got '" + args.get("method", "") + "'");
        }
        int chunks = args.getInt("chunks", 0);
        if (chunks < 0) throw new Args.UsageException("--chunks must be >= 0, got " + chunks);
        KvDtype kv = CommandOptions.kvDtype(args);
        int threads = CommandOptions.threads(args);
        Backend backend = CommandOptions.backend(args);
        if (Files.isDirectory(textFile)) throw new Args.UsageException("--text " + textFile + " is a directory, not a text file");
        String text;
        try {
            text = Files.readString(textFile);
        } catch (CharacterCodingException e) {
            throw new Args.UsageException("--text " + textFile + " is not UTF-8 text");
        }

        long start = System.nanoTime();
        try (ModelOptimizer m = ModelOptimizer.load(model)) {
            int ctx = CommandOptions.contextLength(args, m.config().contextLength(), 2);
            KvBudget.Plan plan = CommandOptions.kvPlan(args, m.config(), kv, ctx);
            if (!backend.kvDtypes().contains(kv)) throw new Args.UsageException("--kv-cache " + kv.cliName() + ": backend " + backend.name() + " supports " + backend.kvDtypes());
            Tokenizer tok = m.tokenizer();
            // as llama-perplexity: add_special = true, parse_special = false
            int[] tokens = tok.encode(text, true, false);
            if (tokens.length < ctx) {
                throw new Args.UsageException("the text has " + tokens.length + " tokens, fewer than one window of --ctx " + ctx);
            }
            WindowProtocol protocol = method.equals("windows")
                    ? WindowProtocol.nonOverlapping(ctx)
                    : WindowProtocol.llamaCpp(ctx, tok.addsBos() ? tok.bosId() : -1);
            if (chunks > 0) protocol = protocol.withMaxWindows(chunks);
            RunnerOptions ro = RunnerOptions.builder().threads(threads).kvDtype(kv).contextLength(ctx).build();
            Perplexity.Result r;
            try (ModelRunner runner = backend.load(m.source(), ro)) {
                r = Perplexity.evaluate(runner, tokens, protocol, new ProgressBar(err));
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            out.println("model: " + model);
            out.println("tokens: " + tokens.length);
            out.printf(Locale.ROOT, "windows: %d x %d tokens (%s method, KV %s)%n", r.windows(), ctx, method, kv.cliName());
            out.println(CommandOptions.kvLine(m.config(), kv, plan));
            out.println("scored tokens: " + r.tokensScored());
            out.printf(Locale.ROOT, "mean NLL: %.6f%n", r.meanNll());
            out.printf(Locale.ROOT, "+/-: %.5f%n", r.error());
            out.printf(Locale.ROOT, "seconds: %.2f%n", seconds);
            out.printf(Locale.ROOT, "perplexity: %.4f%n", r.perplexity());
        }
        return 0;
    }
}
