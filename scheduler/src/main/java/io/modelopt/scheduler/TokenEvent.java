package io.modelopt.scheduler;

/**
 * One streamed piece of a request's output: sample {@code sample}'s token {@code tokenId} and the
 * text it released ({@code ""} while a stop string or a multi-byte character is held back). The
 * final event of a sample has {@code tokenId == -1} and carries the held-back tail and the finish reason.
 */
public record TokenEvent(int sample, int tokenId, String text, io.modelopt.core.generate.FinishReason finishReason) {
    /** Whether this is the last event of its sample. */
    public boolean isFinish() { return finishReason != null; }
}
