package io.modelopt.core.eval;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerMemory;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quality of a quantized model against its base, in the numbers people compare: perplexity
 * under both {@link WindowProtocol protocols} and its change, the KL divergence of the next-token
 * distributions and top-1 agreement (llama-perplexity's {@code --kl-divergence}), greedy
 * agreement on a few prompts, and the size: bits per weight, file and resident bytes.
 *
 * <p>{@code Evaluation.run(basePath, quantPath, text, options, listener)} loads both models side
 * by side (see {@link EvaluationModels}); {@link #run(Subject, Subject, String, Options, ProgressListener)}
 * takes models already loaded. The {@link Result} renders as {@code modelopt evaluate}'s table and
 * as JSON, so the CLI, a report comparing stages and API users read the same numbers.
 *
 * <p>Cost: two passes over the text, each running both models batch for batch (llama.cpp's
 * protocol with the KL comparison, then the non-overlapping one), then 2 × prompts short
 * generations.
 */
public final class Evaluation {
    private static final Logger LOG = LoggerFactory.getLogger(Evaluation.class);

    private Evaluation() {}

    /**
     * @param contextLength tokens per window; 0 = the shorter trained context of the two models
     * @param maxWindows    windows evaluated per protocol, 0 = all (llama-perplexity's {@code --chunks})
     * @param prompts       greedy prompts: the first this many non-empty lines of the text
     * @param promptTokens  tokens of each line in its prompt (after BOS)
     * @param newTokens     greedy tokens generated per prompt and model
     * @param threads       compute threads, shared by both models
     * @param kvDtype       KV cache element type of both models
     * @param backend       the {@link io.modelopt.core.engine.Backend} name both models run on
     */
    public record Options(int contextLength, int maxWindows, int prompts, int promptTokens, int newTokens, int threads,
                          KvDtype kvDtype, String backend) {
        public static final int DEFAULT_PROMPTS = 3, DEFAULT_PROMPT_TOKENS = 12, DEFAULT_NEW_TOKENS = 32;

        public Options {
            Objects.requireNonNull(kvDtype, "kvDtype");
            Objects.requireNonNull(backend, "backend");
            if (contextLength != 0 && contextLength < 2) throw new IllegalArgumentException("context length (" + contextLength + ") must be >= 2 (0 = the models')");
            if (maxWindows < 0) throw new IllegalArgumentException("max windows (" + maxWindows + ") must be >= 0 (0 = all)");
            if (prompts < 0) throw new IllegalArgumentException("greedy prompts (" + prompts + ") must be >= 0");
            if (promptTokens < 1) throw new IllegalArgumentException("prompt tokens (" + promptTokens + ") must be >= 1");
            if (newTokens < 0) throw new IllegalArgumentException("new tokens (" + newTokens + ") must be >= 0");
            if (threads < 1) throw new IllegalArgumentException("threads (" + threads + ") must be >= 1");
        }

        public static Builder builder() { return new Builder(); }

        /** Positions a greedy prompt and its generation use (the last new token is not fed back). */
        int greedyPositions() { return prompts == 0 || newTokens == 0 ? 0 : 1 + promptTokens + newTokens - 1; }

        public static final class Builder {
            private int contextLength, maxWindows, prompts = DEFAULT_PROMPTS, promptTokens = DEFAULT_PROMPT_TOKENS, newTokens = DEFAULT_NEW_TOKENS;
            private int threads = Runtime.getRuntime().availableProcessors();
            private KvDtype kvDtype = KvDtype.F16;
            private String backend = "cpu";

            /** Tokens per window (default 0: the models' trained context). */
            public Builder contextLength(int v) { contextLength = v; return this; }
            /** Windows per protocol (default 0: all). */
            public Builder maxWindows(int v) { maxWindows = v; return this; }
            /** Greedy prompts (default 3). */
            public Builder prompts(int v) { prompts = v; return this; }
            /** Tokens of a line in its prompt (default 12). */
            public Builder promptTokens(int v) { promptTokens = v; return this; }
            /** Greedy tokens per prompt (default 32). */
            public Builder newTokens(int v) { newTokens = v; return this; }
            /** Compute threads (default: all processors). */
            public Builder threads(int v) { threads = v; return this; }
            /** KV cache type (default F16, as llama.cpp). */
            public Builder kvDtype(KvDtype v) { kvDtype = v; return this; }
            /** Backend name (default "cpu"). */
            public Builder backend(String v) { backend = v; return this; }

            public Options build() { return new Options(contextLength, maxWindows, prompts, promptTokens, newTokens, threads, kvDtype, backend); }
        }
    }

    /** A loaded model to evaluate: a name for the table, its files and its runner. */
    public record Subject(String name, ModelSource source, ModelRunner runner) {
        public Subject {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(runner, "runner");
        }
    }

    /**
     * The figures of one model.
     *
     * @param memory   the runner's {@link ModelRunner#memory()} before the passes: weights as bound,
     *                 repacked copies and scratch (KV caches are per pass and not included)
     * @param llamaCpp perplexity under {@link WindowProtocol#llamaCpp}
     * @param windows  perplexity under {@link WindowProtocol#nonOverlapping}
     */
    public record Side(String name, Path path, String format, WeightStats weights, RunnerMemory memory,
                       Perplexity.Result llamaCpp, Perplexity.Result windows) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("path", path.toAbsolutePath().toString());
            m.put("format", format);
            m.put("file_bytes", weights.fileBytes());
            m.put("parameters", weights.parameters());
            m.put("tensor_bytes", weights.tensorBytes());
            m.put("bits_per_weight", weights.bitsPerWeight());
            m.put("block_linear_parameters", weights.blockLinearParameters());
            m.put("block_linear_bytes", weights.blockLinearBytes());
            m.put("block_linear_bits_per_weight", weights.blockLinearBitsPerWeight());
            Map<String, Object> mem = new LinkedHashMap<>();
            mem.put("weight_bytes", memory.weightBytes());
            mem.put("repacked_bytes", memory.repackedBytes());
            mem.put("kv_bytes", memory.kvBytes());
            mem.put("scratch_bytes", memory.scratchBytes());
            mem.put("total_bytes", memory.totalBytes());
            m.put("runner_memory", mem);
            m.put("perplexity_llama_cpp", perplexity(llamaCpp));
            m.put("perplexity_windows", perplexity(windows));
            return m;
        }

        private static Map<String, Object> perplexity(Perplexity.Result r) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("perplexity", r.perplexity());
            m.put("error", r.error());
            m.put("mean_nll", r.meanNll());
            return m;
        }
    }

    /**
     * Everything {@code modelopt evaluate} prints.
     *
     * @param tokens        tokens of the whole text (with BOS)
     * @param contextLength tokens per window
     * @param kl            base → quant over the scored positions of llama.cpp's protocol
     * @param newTokens     greedy tokens per prompt
     */
    public record Result(Side base, Side quant, int tokens, int contextLength, KvDtype kvDtype, KlDivergence.Result kl,
                         int newTokens, List<GreedyAgreement> greedy) {
        public Result {
            greedy = List.copyOf(greedy);
        }

        /** 100 · (quant / base − 1) of the perplexity under llama.cpp's protocol. */
        public double llamaCppChangePercent() { return change(base.llamaCpp().perplexity(), quant.llamaCpp().perplexity()); }

        /** 100 · (quant / base − 1) of the perplexity under the non-overlapping protocol. */
        public double windowsChangePercent() { return change(base.windows().perplexity(), quant.windows().perplexity()); }

        /** New tokens equal in both before the first difference, summed over the prompts. */
        public int greedyAgreed() { return greedy.stream().mapToInt(GreedyAgreement::agreed).sum(); }

        /** The table {@code modelopt evaluate} prints; add rows before rendering it. */
        public EvaluationTable table() { return EvaluationTable.of(this); }

        /** Every number of the table (and the greedy tokens), as a JSON object. */
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("base", base.toJson());
            m.put("quant", quant.toJson());
            Map<String, Object> text = new LinkedHashMap<>();
            text.put("tokens", tokens);
            text.put("context_length", contextLength);
            text.put("kv_dtype", kvDtype.name().toLowerCase(Locale.ROOT));
            text.put("windows_llama_cpp", base.llamaCpp().windows());
            text.put("scored_llama_cpp", base.llamaCpp().tokensScored());
            text.put("windows_windows", base.windows().windows());
            text.put("scored_windows", base.windows().tokensScored());
            m.put("text", text);
            m.put("perplexity_change_percent_llama_cpp", llamaCppChangePercent());
            m.put("perplexity_change_percent_windows", windowsChangePercent());
            Map<String, Object> k = new LinkedHashMap<>();
            k.put("protocol", "llama.cpp");
            k.put("positions", kl.positions());
            k.put("mean", kl.meanKl());
            k.put("max", kl.maxKl());
            k.put("top1_agreement", kl.top1Agreement());
            m.put("kl_divergence", k);
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("new_tokens", newTokens);
            g.put("agreed", greedyAgreed());
            List<Object> prompts = new ArrayList<>();
            for (GreedyAgreement a : greedy) {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("prompt", a.promptText());
                p.put("prompt_ids", a.prompt());
                p.put("agreed", a.agreed());
                p.put("base_ids", a.base());
                p.put("quant_ids", a.test());
                prompts.add(p);
            }
            g.put("prompts", prompts);
            m.put("greedy", g);
            return m;
        }

        public String toJsonString() { return Json.writePretty(toJson()); }
    }

    static double change(double base, double quant) { return 100 * (quant / base - 1); }

    /** Loads both models (through {@link io.modelopt.core.ModelOptimizer#load}), evaluates and closes them. */
    public static Result run(Path base, Path quant, String text, Options options, ProgressListener listener) {
        try (EvaluationModels models = EvaluationModels.load(base, quant, options)) {
            return models.evaluate(text, listener);
        }
    }

    /**
     * Evaluates {@code quant} against {@code base} on {@code text} (tokenized as one string with
     * BOS, as llama-perplexity does). The runners must accept windows of the context length and
     * the greedy prompts; {@link EvaluationModels} makes such runners.
     *
     * @throws IllegalArgumentException when the models' vocabularies differ or their tokenizers cut
     *         the text differently, or the text is shorter than one window
     */
    public static Result run(Subject base, Subject quant, String text, Options options, ProgressListener listener) {
        ProgressListener progress = listener == null ? ProgressListener.NONE : listener;
        checkSameVocabulary(base.name(), base.source(), quant.name(), quant.source());
        Tokenizer tok = base.source().tokenizer();
        int[] tokens = tok.encode(text, true, false);
        int[] other = quant.source().tokenizer().encode(text, true, false);
        int diff = java.util.Arrays.mismatch(tokens, other);
        if (diff >= 0) {
            throw new IllegalArgumentException("the tokenizers of " + base.name() + " and " + quant.name() + " cut the text differently (" + tokens.length
                    + " vs " + other.length + " tokens, first difference at token " + diff + "): a quantized model must keep its base's tokenizer");
        }
        int ctx = options.contextLength() > 0 ? options.contextLength()
                : Math.min(base.source().config().contextLength(), quant.source().config().contextLength());
        if (tokens.length < ctx) {
            throw new IllegalArgumentException("the text has " + tokens.length + " tokens, fewer than one window of context " + ctx);
        }
        RunnerMemory baseMemory = base.runner().memory(), quantMemory = quant.runner().memory();

        WindowProtocol llama = WindowProtocol.llamaCpp(ctx, tok.addsBos() ? tok.bosId() : -1).withMaxWindows(options.maxWindows());
        PairedPass.Result first = PairedPass.run(base.runner(), quant.runner(), tokens, llama, true, "perplexity+kl (llama.cpp)", progress);
        WindowProtocol windows = WindowProtocol.nonOverlapping(ctx).withMaxWindows(options.maxWindows());
        PairedPass.Result second = PairedPass.run(base.runner(), quant.runner(), tokens, windows, false, "perplexity (windows)", progress);

        List<GreedyAgreement> greedy = new ArrayList<>();
        if (options.newTokens() > 0) {
            List<GreedyAgreement.Prompt> prompts = GreedyAgreement.prompts(text, tok, options.prompts(), options.promptTokens());
            progress.onProgress("greedy", 0, prompts.size());
            for (GreedyAgreement.Prompt p : prompts) {
                greedy.add(GreedyAgreement.of(p, base.runner(), quant.runner(), options.newTokens()));
                progress.onProgress("greedy", greedy.size(), prompts.size());
            }
        }
        Result r = new Result(side(base, baseMemory, first.base(), second.base()), side(quant, quantMemory, first.test(), second.test()),
                tokens.length, ctx, base.runner().options().kvDtype(), first.kl(), options.newTokens(), greedy);
        LOG.info("evaluate {} vs {}: PPL {} -> {} ({}%), {}, greedy {}/{}", base.name(), quant.name(),
                r.base().llamaCpp().perplexity(), r.quant().llamaCpp().perplexity(), String.format(Locale.ROOT, "%+.3f", r.llamaCppChangePercent()),
                r.kl(), r.greedyAgreed(), greedy.size() * options.newTokens());
        return r;
    }

    private static Side side(Subject s, RunnerMemory memory, Perplexity.Result llamaCpp, Perplexity.Result windows) {
        return new Side(s.name(), s.source().path(), s.source().format(), WeightStats.of(s.source()), memory, llamaCpp, windows);
    }

    static void checkSameVocabulary(String baseName, ModelSource base, String quantName, ModelSource quant) {
        int vb = base.config().vocabSize(), vq = quant.config().vocabSize();
        int tb = base.tokenizer().vocabSize(), tq = quant.tokenizer().vocabSize();
        if (vb != vq || tb != tq) {
            throw new IllegalArgumentException("base " + baseName + " and quant " + quantName + " have different vocabularies ("
                    + vb + " vs " + vq + " tokens): a quantized model must keep its base's tokenizer");
        }
    }
}
