package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.GenerationResult;
import io.modelopt.core.generate.GenerationTimings;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.sampling.SamplingParams;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;

/**
 * {@code modelopt generate --model MODEL --prompt TEXT ...}: streams the generated continuation
 * of the prompt to stdout as it is produced, then one stats line to stderr. It runs through the
 * continuous-batching {@link Engine} with one seat, its KV cache paged over blocks for the context
 * length (or the {@code --kv-budget} plan), and a token budget that prefills a prompt of up to
 * {@value #PREFILL_TOKENS} tokens in one batch, as the single-sequence {@code Generator} does: the
 * same kernels on the same rows, so the same text (a test compares them).
 */
public final class GenerateCommand implements Command {
    /** Tokens per step: the runner's default batch, so a prompt prefills in one forward up to this length. */
    static final int PREFILL_TOKENS = 512;

    @Override public String name() { return "generate"; }

    @Override public String summary() { return "generate text from a prompt, streamed to stdout"; }

    @Override public String usage() {
        return """
                usage: modelopt generate --model MODEL --prompt TEXT [options]
                  --model MODEL         a .gguf file or a Hugging Face model directory
                  --prompt TEXT         the text to continue (BOS is added as the tokenizer does)
                  --max-tokens N        most tokens to generate (default 128)
                  --temperature T       0 = greedy, the most likely token every time (default 0);
                                        above 0 samples, with llama.cpp's default top-k/top-p/min-p
                  --top-k K             keep the K most likely tokens (default 40; 0 = off)
                  --top-p P             keep the smallest set with probability mass P (default 0.95; 1 = off)
                  --min-p P             keep tokens at least P times as likely as the best (default 0.05; 0 = off)
                  --repeat-penalty R    penalize tokens of the last --repeat-last-n tokens (default 1 = off)
                  --repeat-last-n N     window of the repeat penalty (default 64)
                  --seed S              random seed of the sampler (default: random, printed in the stats)
                  --stop STR            stop when the text contains STR (STR itself is not printed)
                  %s
                  --threads T           worker threads (default: all processors)
                  --ctx N               context length: prompt + generated tokens (default and maximum:
                                        the model's trained context length)
%s
                  --echo                print the prompt before the generated text
                Generation ends at an end-of-sequence token, the stop string, --max-tokens, or when
                prompt + generated tokens fill the context. Stats go to stderr.""".formatted(CommandOptions.BACKEND_USAGE.strip(), CommandOptions.KV_USAGE);
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "prompt", "max-tokens", "temperature", "top-k", "top-p", "min-p",
                "repeat-penalty", "repeat-last-n", "seed", "stop", "threads", "ctx", "kv", "kv-cache", "kv-budget", "backend"), Set.of("echo"));
        Path model = Path.of(args.require("model"));
        String prompt = args.require("prompt");
        SamplingParams.Builder sb = SamplingParams.builder()
                .temperature((float) args.getDouble("temperature", 0))
                .topK(args.getInt("top-k", SamplingParams.DEFAULT_TOP_K))
                .topP((float) args.getDouble("top-p", SamplingParams.DEFAULT_TOP_P))
                .minP((float) args.getDouble("min-p", SamplingParams.DEFAULT_MIN_P))
                .repetitionPenalty((float) args.getDouble("repeat-penalty", 1))
                .penaltyWindow(args.getInt("repeat-last-n", SamplingParams.DEFAULT_PENALTY_WINDOW));
        if (args.has("seed")) sb.seed(args.getLong("seed", 0));
        GenerationOptions.Builder gb = GenerationOptions.builder().maxTokens(args.getInt("max-tokens", GenerationOptions.DEFAULT_MAX_TOKENS));
        if (args.has("stop")) gb.stopString(args.get("stop", ""));
        GenerationOptions options;
        try {
            options = gb.sampling(sb.build()).build();
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException(e.getMessage());
        }
        KvDtype kv = CommandOptions.kvDtype(args);
        int threads = CommandOptions.threads(args);
        Backend backend = CommandOptions.backend(args);

        try (ModelOptimizer m = ModelOptimizer.load(model)) {
            int ctx = CommandOptions.contextLength(args, m.config().contextLength(), 1);
            KvBudget.Plan plan = CommandOptions.kvPlan(args, m.config(), kv, ctx);
            if (!backend.kvDtypes().contains(kv)) throw new Args.UsageException("--kv-cache " + kv.cliName() + ": backend " + backend.name() + " supports " + backend.kvDtypes());
            if (plan != null) err.println(plan); // the budget's blocks (stderr keeps the stats line alone otherwise)
            RunnerOptions ro = RunnerOptions.builder().threads(threads).kvDtype(kv).contextLength(ctx).maxLogitsRows(1).maxBatchTokens(PREFILL_TOKENS).build();
            EngineConfig.Builder ec = EngineConfig.builder().maxNumSeqs(1).maxWaiting(1).maxBatchedTokens(PREFILL_TOKENS).prefixCaching(false);
            if (plan != null) ec.kvBlocks(plan.numBlocks()).kvBlockSize(plan.blockSize());
            try (ModelRunner runner = backend.load(m.source(), ro); Engine engine = Engine.start(runner, m.tokenizer(), ec.build(), null)) {
                if (args.has("echo")) out.print(prompt);
                GenerationResult r = engine.generate(prompt, options, TokenListener.text(s -> {
                    out.print(s);
                    out.flush();
                }));
                out.println();
                out.flush();
                err.println(stats(r, options.sampling()));
            }
        }
        return 0;
    }

    private static String stats(GenerationResult r, SamplingParams sp) {
        GenerationTimings t = r.timings();
        return String.format(Locale.ROOT, "prompt %d tokens, generated %d tokens (%s), TTFT %.1f ms, prefill %.1f tokens/s, decode %.1f tokens/s%s",
                t.promptTokens(), r.generatedTokens(), r.finishReason().name().toLowerCase(Locale.ROOT), t.timeToFirstToken() / 1e6,
                t.prefillTokensPerSecond(), t.decodeTokensPerSecond(), sp.isGreedy() ? ", greedy" : ", seed " + sp.seed());
    }
}
