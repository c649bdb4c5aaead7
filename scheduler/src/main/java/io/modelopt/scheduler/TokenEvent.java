package io.modelopt.scheduler;

import io.modelopt.core.generate.FinishReason;
import io.modelopt.core.sampling.TokenLogprobs;

/**
 * One streamed piece of a request's output: sample {@code sample}'s token {@code tokenId} and the
 * text it released ({@code ""} while a stop string or a multi-byte character is held back). The
 * final event of a sample has {@code tokenId == -1} and carries the held-back tail and the finish reason.
 *
 * @param logprobs the token's log-probabilities when the request asked for them
 *                 ({@link EngineRequest.Builder#logprobs(int)}), else null; always null on the final
 *                 event (an end-of-sequence token is not reported, nor its logprob)
 */
public record TokenEvent(int sample, int tokenId, String text, FinishReason finishReason, TokenLogprobs logprobs) {
    /** An event without logprobs. */
    public TokenEvent(int sample, int tokenId, String text, FinishReason finishReason) {
        this(sample, tokenId, text, finishReason, null);
    }

    /** Whether this is the last event of its sample. */
    public boolean isFinish() { return finishReason != null; }
}
