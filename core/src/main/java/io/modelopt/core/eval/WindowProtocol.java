package io.modelopt.core.eval;

/**
 * How a text's tokens are cut into evaluation windows and which positions are scored.
 *
 * @param contextLength       tokens per window ({@code n_ctx}); windows do not overlap and the tail
 *                            shorter than a window is not used
 * @param firstScoredPosition the first position whose prediction of the next token counts; positions
 *                            {@code firstScoredPosition .. contextLength-2} are scored
 * @param bosToken            token that replaces the first token of every window, or -1 to keep it
 * @param maxWindows          evaluate only the first windows (0 = all), like llama-perplexity's {@code --chunks}
 */
public record WindowProtocol(int contextLength, int firstScoredPosition, int bosToken, int maxWindows) {
    public WindowProtocol {
        if (contextLength < 2) throw new IllegalArgumentException("evaluation context length (" + contextLength + ") must be >= 2");
        if (firstScoredPosition < 0 || firstScoredPosition > contextLength - 2) {
            throw new IllegalArgumentException("first scored position " + firstScoredPosition + " outside [0, " + (contextLength - 2) + "]");
        }
        if (maxWindows < 0) throw new IllegalArgumentException("maxWindows (" + maxWindows + ") must be >= 0");
    }

    /**
     * llama-perplexity's default protocol (examples/perplexity/perplexity.cpp): windows of
     * {@code nCtx}, the first token of each replaced by BOS when the vocabulary adds one
     * ({@code bosToken}, or -1), the first half of each window only context, positions
     * {@code nCtx/2 .. nCtx-2} scored.
     */
    public static WindowProtocol llamaCpp(int nCtx, int bosToken) {
        return new WindowProtocol(nCtx, nCtx / 2, bosToken, 0);
    }

    /**
     * The GPTQ/AWQ papers' protocol: non-overlapping windows of {@code nCtx} tokens taken as they
     * are, every position but the last predicting the next (all tokens but each window's first are scored).
     */
    public static WindowProtocol nonOverlapping(int nCtx) {
        return new WindowProtocol(nCtx, 0, -1, 0);
    }

    public WindowProtocol withMaxWindows(int n) {
        return new WindowProtocol(contextLength, firstScoredPosition, bosToken, n);
    }

    /** Predictions scored per window. */
    public int scoredPerWindow() { return contextLength - 1 - firstScoredPosition; }
}
