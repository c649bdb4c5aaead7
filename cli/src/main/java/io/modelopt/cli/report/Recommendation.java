package io.modelopt.cli.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which stage to use: the fastest (single-stream decode, median) among those that meet the
 * {@link Bounds}, with the reason each other stage was not chosen. Ties go to the smaller memory.
 *
 * @param chosenConfiguration the chosen stage's configuration in words, or null
 */
public record Recommendation(String rule, Optional<Stage> chosen, String chosenConfiguration, List<Verdict> verdicts) {
    /** One stage's outcome: whether it meets the bounds, and in words why (not) or why it lost. */
    public record Verdict(Stage stage, boolean meetsBounds, String reason) {}

    public Recommendation {
        verdicts = List.copyOf(verdicts);
    }

    /** Chooses among {@code results}; quality was measured on a text when any stage has a perplexity. */
    public static Recommendation choose(List<StageResult> results, Bounds bounds) {
        boolean onText = results.stream().anyMatch(r -> r.available() && r.quality().hasPerplexity());
        List<StageResult> meeting = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (StageResult r : results) {
            String why = violation(r, bounds, onText);
            failures.add(why);
            if (why == null) meeting.add(r);
        }
        Optional<StageResult> best = meeting.stream().max(Comparator.<StageResult>comparingDouble(r -> r.speed().decodePerSecond().median())
                .thenComparing(Comparator.<StageResult>comparingLong(r -> r.memory().totalBytes()).reversed()));
        List<Verdict> verdicts = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            StageResult r = results.get(i);
            String why = failures.get(i);
            if (why != null) {
                verdicts.add(new Verdict(r.stage(), false, why));
            } else if (best.isPresent() && best.get() == r) {
                verdicts.add(new Verdict(r.stage(), true, String.format(Locale.ROOT, "chosen: meets the bounds, fastest at %s decode tokens/s",
                        Format.number(r.speed().decodePerSecond().median()))));
            } else {
                double b = best.orElseThrow().speed().decodePerSecond().median(), mine = r.speed().decodePerSecond().median();
                verdicts.add(new Verdict(r.stage(), true, String.format(Locale.ROOT, "meets the bounds but is slower: %s decode tokens/s against stage %d's %s",
                        Format.number(mine), best.get().stage().number(), Format.number(b))));
            }
        }
        return new Recommendation(bounds.describe(onText), best.map(StageResult::stage), best.map(StageResult::configuration).orElse(null), verdicts);
    }

    /** Why {@code r} does not meet {@code bounds}, or null when it does. */
    static String violation(StageResult r, Bounds bounds, boolean onText) {
        if (!r.available()) return "not available: " + r.unavailable();
        List<String> why = new ArrayList<>();
        if (bounds.hasMemoryBound() && r.memory().totalBytes() > bounds.memoryBudgetBytes()) {
            why.add("memory " + Format.mib(r.memory().totalBytes()) + " MiB > budget " + Format.mib(bounds.memoryBudgetBytes()) + " MiB");
        }
        StageResult.Quality q = r.quality();
        double kl = q.meanKl();
        if (bounds.hasKlBound() && !(kl <= bounds.maxKl())) {
            why.add("mean KL " + Format.kl(kl) + " > " + Format.number(bounds.maxKl()) + " nats");
        }
        if (bounds.hasPerplexityBound()) {
            double d = q.perplexityChangePercent();
            if (Double.isNaN(d)) why.add("no perplexity measured (needs --text)");
            else if (d > bounds.maxPerplexityIncreasePercent()) {
                why.add(String.format(Locale.ROOT, "perplexity %+.2f %% > +%s %%", d, Format.number(bounds.maxPerplexityIncreasePercent())));
            }
        }
        if (bounds.usesDefaultQualityRule()) {
            if (!(kl <= Bounds.DEFAULT_MAX_KL)) why.add("mean KL " + Format.kl(kl) + " > " + Format.number(Bounds.DEFAULT_MAX_KL) + " nats");
            if (onText && !(q.top1Agreement() >= Bounds.DEFAULT_MIN_TOP1)) {
                why.add(String.format(Locale.ROOT, "top-1 agreement %.1f %% < %.0f %%", 100 * q.top1Agreement(), 100 * Bounds.DEFAULT_MIN_TOP1));
            }
        }
        return why.isEmpty() ? null : String.join("; ", why);
    }

    /** The recommendation in a few lines, as the report prints it under the table. */
    public List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add("Rule: " + rule + ".");
        out.add(chosen.map(s -> "Recommended: stage " + s.number() + " (" + s.key() + ": " + chosenConfiguration + ").")
                .orElse("No stage meets the bounds; see why below."));
        for (Verdict v : verdicts) out.add("- stage " + v.stage().number() + ": " + v.reason());
        return out;
    }
}
