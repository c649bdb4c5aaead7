package io.modelopt.scheduler;

import io.modelopt.core.generate.FinishReason;
import java.util.List;

/**
 * A finished request: one {@link Completion} per sample, the token usage and the timings
 * (nanoseconds from submit): queue time until its prompt was first scheduled, time to the first
 * token of any sample, and the end-to-end time until its last sample ended.
 */
public record EngineResult(List<Completion> completions, int promptTokens, int completionTokens, long queueNanos, long ttftNanos, long e2eNanos) {
    public EngineResult {
        completions = List.copyOf(completions);
    }

    /** Sample 0's text. */
    public String text() { return completions.getFirst().text(); }

    /** Sample 0's token ids. */
    public int[] tokenIds() { return completions.getFirst().tokenIds(); }

    /** Sample 0's finish reason. */
    public FinishReason finishReason() { return completions.getFirst().finishReason(); }
}
