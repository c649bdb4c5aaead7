package io.modelopt.core.sampling;

import java.util.List;
import java.util.Objects;

/**
 * The log-probabilities reported with one generated token (OpenAI's {@code logprobs}): the chosen
 * {@code token}'s {@code logprob}, and the {@code top} most likely tokens with theirs, sorted by
 * logprob descending, the lower id first on ties. Computed by {@link Logprobs#of} from the raw
 * logits row, before the bias, the penalties, the temperature and the truncation (vLLM's default
 * {@code raw_logprobs} mode): they are the model's own distribution, not the one drawn from.
 *
 * @param token   the chosen token
 * @param logprob its natural-log probability, {@code <= 0} ({@code -inf} for a token of probability 0)
 * @param top     the most likely tokens, immutable; may or may not contain {@code token}
 */
public record TokenLogprobs(int token, double logprob, List<TopLogprob> top) {
    /** The most top entries a request may ask for (OpenAI's limit of {@code top_logprobs}). */
    public static final int MAX_TOP_LOGPROBS = 20;

    public TokenLogprobs {
        top = List.copyOf(Objects.requireNonNull(top, "top"));
    }

    /** One of the most likely tokens at a step and its natural-log probability. */
    public record TopLogprob(int token, double logprob) {}
}
