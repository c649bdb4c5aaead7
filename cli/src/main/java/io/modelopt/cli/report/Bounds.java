package io.modelopt.cli.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the user will accept ({@code --memory-budget}, {@code --max-ppl-increase}, {@code --max-kl}).
 * Without a quality bound the default quality rule applies ({@link #DEFAULT_MAX_KL}, and
 * {@link #DEFAULT_MIN_TOP1} when the evaluation is on a text): a stage that is fast but says
 * different things than the baseline is no recommendation. Top-1 agreement is left out on random
 * tokens: a random-weight model's next-token distributions are nearly flat, so its first token
 * flips under changes that move the distribution by little (synthetic small125m, INT4 RTN: mean
 * KL 0.026 nats, top-1 agreement 30 %).
 *
 * @param memoryBudgetBytes       most weights + KV + other bytes, or -1 for no memory bound
 * @param maxPerplexityIncreasePercent most perplexity increase over the baseline in percent, or NaN
 * @param maxKl                   most mean KL divergence in nats, or NaN
 */
public record Bounds(long memoryBudgetBytes, double maxPerplexityIncreasePercent, double maxKl) {
    /** The default quality rule: mean KL at most 0.05 nats ... */
    public static final double DEFAULT_MAX_KL = 0.05;
    /** ... and, on a text, the same first token at least 90 % of the time. */
    public static final double DEFAULT_MIN_TOP1 = 0.90;

    public static final Bounds NONE = new Bounds(-1, Double.NaN, Double.NaN);

    public Bounds {
        if (memoryBudgetBytes < -1 || memoryBudgetBytes == 0) throw new IllegalArgumentException("memory budget must be > 0 bytes, got " + memoryBudgetBytes);
        if (maxPerplexityIncreasePercent < 0) throw new IllegalArgumentException("max perplexity increase must be >= 0 %, got " + maxPerplexityIncreasePercent);
        if (maxKl < 0) throw new IllegalArgumentException("max KL must be >= 0 nats, got " + maxKl);
    }

    public boolean hasMemoryBound() { return memoryBudgetBytes > 0; }

    public boolean hasPerplexityBound() { return !Double.isNaN(maxPerplexityIncreasePercent); }

    public boolean hasKlBound() { return !Double.isNaN(maxKl); }

    /** Whether the user gave any bound (else the report states its default trade-off rule). */
    public boolean given() { return hasMemoryBound() || hasPerplexityBound() || hasKlBound(); }

    /** Whether the default quality rule applies (no quality bound given). */
    public boolean usesDefaultQualityRule() { return !hasPerplexityBound() && !hasKlBound(); }

    /**
     * The rule in words, as the report prints it.
     *
     * @param onText whether quality was measured on a text (then the default rule includes top-1 agreement)
     */
    public String describe(boolean onText) {
        List<String> parts = new ArrayList<>();
        if (hasMemoryBound()) parts.add("memory (weights + KV + other) <= " + Format.mib(memoryBudgetBytes) + " MiB");
        if (hasKlBound()) parts.add(String.format(Locale.ROOT, "mean KL <= %s nats", Format.number(maxKl)));
        if (hasPerplexityBound()) parts.add(String.format(Locale.ROOT, "perplexity increase <= %s %%", Format.number(maxPerplexityIncreasePercent)));
        if (usesDefaultQualityRule()) {
            parts.add(onText
                    ? String.format(Locale.ROOT, "mean KL <= %s nats and top-1 agreement >= %.0f %% (default quality rule)",
                            Format.number(DEFAULT_MAX_KL), 100 * DEFAULT_MIN_TOP1)
                    : String.format(Locale.ROOT, "mean KL <= %s nats (default quality rule; top-1 agreement is not used on random tokens, "
                            + "whose near-flat distributions flip their first token easily)", Format.number(DEFAULT_MAX_KL)));
        }
        return "the fastest stage (single-stream decode tokens/s, median) with " + String.join(", ", parts);
    }
}
