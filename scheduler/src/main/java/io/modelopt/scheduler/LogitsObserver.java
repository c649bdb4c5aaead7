package io.modelopt.scheduler;

/**
 * Sees each logits row the engine samples from, on the step loop (keep it quick; copy what you
 * keep): request id, sample index, the position the row predicts from, and the row
 * {@code buffer[offset .. offset + vocab)}. For tests (batch invariance) and tools.
 */
@FunctionalInterface
public interface LogitsObserver {
    void onLogits(long requestId, int sample, int position, float[] buffer, int offset, int vocabSize);
}
