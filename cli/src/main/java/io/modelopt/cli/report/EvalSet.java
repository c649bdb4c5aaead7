package io.modelopt.cli.report;

import io.modelopt.cli.command.InferenceBench;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.tokenizer.Tokenizer;
import java.util.Locale;

/**
 * The tokens every stage's next-token distributions are compared on, cut into windows by
 * llama-perplexity's protocol (BOS at each window start, the second half of each window scored),
 * the same protocol {@code modelopt perplexity} uses by default, so that a perplexity here equals
 * that command's on the same text and context.
 *
 * @param text the text the tokens are of, or null for random tokens (which have no perplexity worth showing)
 */
record EvalSet(int[] tokens, WindowProtocol protocol, String text, String description) {
    /** Seed of the synthetic evaluation tokens (fixed: every stage and every run sees the same ones). */
    static final long SYNTHETIC_SEED = 20260421;

    /** Uniform random tokens, for the synthetic model (it was never trained on any text). */
    static EvalSet synthetic(int vocab, int bos, int context, int windows) {
        int[] tokens = InferenceBench.prompt(context * windows, vocab, -1, SYNTHETIC_SEED);
        WindowProtocol p = WindowProtocol.llamaCpp(context, bos).withMaxWindows(windows);
        return new EvalSet(tokens, p, null, String.format(Locale.ROOT,
                "%d windows of %d uniform random tokens (seed %d), %d next-token distributions scored (positions %d-%d of each window)",
                windows, context, SYNTHETIC_SEED, windows * p.scoredPerWindow(), p.firstScoredPosition(), context - 2));
    }

    /** A text's tokens as {@code modelopt perplexity} takes them (special tokens added, none parsed). */
    static EvalSet text(String name, String text, Tokenizer tokenizer, int context, int maxWindows) {
        int[] tokens = tokenizer.encode(text, true, false);
        if (tokens.length < context) {
            throw new IllegalArgumentException("--text " + name + " has " + tokens.length + " tokens, fewer than one evaluation window of "
                    + context + " (lower --ctx)");
        }
        WindowProtocol p = WindowProtocol.llamaCpp(context, tokenizer.addsBos() ? tokenizer.bosId() : -1).withMaxWindows(maxWindows);
        int windows = maxWindows > 0 ? Math.min(maxWindows, tokens.length / context) : tokens.length / context;
        return new EvalSet(tokens, p, text, String.format(Locale.ROOT,
                "%s: %d tokens, %d windows of %d (llama-perplexity's protocol: BOS at each window, second half scored), %d next-token "
                        + "distributions", name, tokens.length, windows, context, windows * p.scoredPerWindow()));
    }

    boolean fromText() { return text != null; }

    int windows() {
        int available = tokens.length / protocol.contextLength();
        return protocol.maxWindows() > 0 ? Math.min(available, protocol.maxWindows()) : available;
    }

    long positions() { return (long) windows() * protocol.scoredPerWindow(); }
}
