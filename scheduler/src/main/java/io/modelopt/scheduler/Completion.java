package io.modelopt.scheduler;

import io.modelopt.core.generate.FinishReason;
import java.util.Objects;

/**
 * One sample of a finished request: its text, token ids (an EOS not included), why it ended, and
 * when each token came out ({@code tokenNanos[i]}: nanoseconds from submit to token {@code i}).
 */
public record Completion(int index, String text, int[] tokenIds, FinishReason finishReason, long[] tokenNanos) {
    public Completion {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(finishReason, "finishReason");
        tokenIds = tokenIds.clone();
        tokenNanos = tokenNanos.clone();
    }

    @Override public int[] tokenIds() { return tokenIds.clone(); }

    @Override public long[] tokenNanos() { return tokenNanos.clone(); }
}
