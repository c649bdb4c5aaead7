package io.modelopt.cli.report;

import java.util.List;
import java.util.Objects;

/** A finished report: the method, one result per chosen stage (in stage order) and the recommendation. */
public record Report(ReportHeader header, List<StageResult> stages, Recommendation recommendation) {
    /** What the 8-concurrent-request columns measure; printed as their footnote. */
    public static final String CONCURRENT_NOTE = "8 requests sharing a 64-token system prompt, submitted at once: stages 1-3 serve them one at "
            + "a time, stage 4 through the engine together; completion and TTFT from submission (waiting included).";

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
