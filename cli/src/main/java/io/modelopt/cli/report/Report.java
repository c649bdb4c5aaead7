package io.modelopt.cli.report;

import java.util.List;
import java.util.Objects;

/** A finished report: the method, one result per chosen stage (in stage order) and the recommendation. */
public record Report(ReportHeader header, List<StageResult> stages, Recommendation recommendation) {
    /** Why the 8-concurrent-request columns are empty; printed as their footnote. */
    public static final String CONCURRENT_NOTE = "8 concurrent requests sharing a 64-token system prompt need the continuous-batching engine "
            + "(issue 19), which this build does not have yet.";

    public Report {
        Objects.requireNonNull(header, "header");
        stages = List.copyOf(stages);
        Objects.requireNonNull(recommendation, "recommendation");
    }

    /** Whether any stage has a perplexity (only with --text). */
    public boolean hasPerplexity() {
        return stages.stream().anyMatch(s -> s.available() && s.quality().hasPerplexity());
    }
}
