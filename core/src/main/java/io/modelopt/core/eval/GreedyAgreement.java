package io.modelopt.core.eval;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * How long two models keep generating the same text: both continue a prompt greedily (argmax,
 * lowest id on ties) and {@link #agreed()} counts the new tokens up to the first difference.
 * Perplexity and KL average over many positions; this shows what a user sees, where one early
 * flip changes everything after it.
 *
 * <p>End-of-sequence is not special here: both models keep going for the full count, so every
 * prompt compares the same number of tokens whatever the text.
 *
 * @param promptText the prompt decoded (special tokens skipped)
 * @param prompt     the prompt's token ids (BOS, when the tokenizer adds one, then a line's first tokens)
 * @param base   the base model's new tokens
 * @param test   the other model's new tokens
 * @param agreed new tokens equal in both before the first difference ({@code base.length} when all are)
 */
public record GreedyAgreement(String promptText, int[] prompt, int[] base, int[] test, int agreed) {

    /** Compares {@code newTokens} greedy tokens of both runners after {@code prompt}. */
    public static GreedyAgreement of(Prompt prompt, ModelRunner base, ModelRunner test, int newTokens) {
        int[] a = generate(base, prompt.ids(), newTokens), b = generate(test, prompt.ids(), newTokens);
        int same = 0;
        while (same < newTokens && a[same] == b[same]) same++;
        return new GreedyAgreement(prompt.text(), prompt.ids().clone(), a, b, same);
    }

    /**
     * The prompts of the first {@code lines} non-empty lines of {@code text}: each line tokenized
     * alone, its first {@code tokens} tokens, after BOS when the tokenizer adds one.
     */
    public static List<Prompt> prompts(String text, Tokenizer tokenizer, int lines, int tokens) {
        List<Prompt> out = new ArrayList<>();
        for (String line : (Iterable<String>) text.lines().filter(l -> !l.isBlank()).limit(lines)::iterator) {
            int[] ids = tokenizer.encode(line, false, false);
            int n = Math.min(tokens, ids.length);
            boolean bos = tokenizer.addsBos();
            int[] p = new int[n + (bos ? 1 : 0)];
            if (bos) p[0] = tokenizer.bosId();
            System.arraycopy(ids, 0, p, bos ? 1 : 0, n);
            out.add(new Prompt(tokenizer.decode(p, true), p));
        }
        return out;
    }

    /** A prompt's ids and their text. */
    public record Prompt(String text, int[] ids) {}

    /** {@code n} greedy tokens after {@code prompt}, on a KV cache of its own. */
    static int[] generate(ModelRunner runner, int[] prompt, int n) {
        int[] out = new int[n];
        if (n == 0) return out;
        int limit = prompt.length + n - 1;   // the last new token is never fed back
        if (limit > runner.contextLength()) {
            throw new IllegalArgumentException("a prompt of " + prompt.length + " tokens and " + n + " new tokens need "
                    + limit + " positions, more than the runner's context length " + runner.contextLength());
        }
        try (KvCache cache = runner.newKvCache(1, limit)) {
            int pos = 0;
            // prefill in pieces the runner's batch limit accepts, logits for the last token only
            while (pos < prompt.length) {
                int end = Math.min(prompt.length, pos + runner.options().maxBatchTokens());
                Batch b = Batch.builder(end - pos).addSequence(0, pos, prompt, pos, end, false).build();
                Logits l = runner.forward(b, cache);
                if (end == prompt.length) out[0] = l.argmax(0);
                pos = end;
            }
            for (int i = 1; i < n; i++) {
                Logits l = runner.forward(Batch.decodeStep(new int[] {0}, new int[] {out[i - 1]}, new int[] {pos++}), cache);
                out[i] = l.argmax(0);
            }
        }
        return out;
    }
}
