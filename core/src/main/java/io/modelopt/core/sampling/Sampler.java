package io.modelopt.core.sampling;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * Chooses tokens for one sequence from rows of logits according to {@link SamplingParams}.
 *
 * <p>Stages, in llama.cpp's default order: repetition penalty → top-k → top-p → min-p →
 * temperature → draw. Candidates are ranked by logit, larger first, the lower token id first on
 * equal logits, so every stage is deterministic.
 *
 * <p>One sampler per sequence: it owns the sequence's random generator (a
 * {@link SplittableRandom} seeded with {@link SamplingParams#seed()}, so the same seed and the same
 * logits give the same tokens) and its recent-token history for the penalty. It works in arrays
 * sized to the vocabulary once, at construction, so sampling a token allocates nothing. The
 * ranking is a binary heap built in O(vocab) from which only as many candidates are taken as the
 * stages need (top-k's k, or until top-p's mass / min-p's floor is reached), rather than a full
 * sort of the vocabulary for every token.
 *
 * <p>{@link #sample} does not record the token: call {@link #accept(int)} with the token that is
 * actually appended to the sequence (prompt tokens included, as llama.cpp does, so the penalty
 * sees them). Not thread-safe.
 */
public final class Sampler {
    private final SamplingParams params;
    private final int vocabSize;
    private final RandomGenerator random;

    /** The row being sampled, after the penalty. */
    private final float[] work;
    /** Min-heap of ranking keys (see {@link #key}); {@code heapSize} live entries. */
    private final long[] heap;
    private int heapSize;
    /** Candidates taken from the heap so far, best first. */
    private final int[] ranked;
    private int rankedCount;
    /** Unnormalized probabilities of the draw. */
    private final double[] weights;

    /** Ring buffer of the last {@code penaltyWindow} accepted tokens. */
    private final int[] history;
    private int historyCount, historyNext;
    /** {@code seen[id] == stamp} marks a token already penalized in this call. */
    private final int[] seen;
    private int stamp;

    public Sampler(SamplingParams params, int vocabSize) {
        this.params = Objects.requireNonNull(params, "params");
        if (vocabSize < 1) throw new IllegalArgumentException("vocabulary size must be >= 1, got " + vocabSize);
        this.vocabSize = vocabSize;
        this.random = new SplittableRandom(params.seed());
        this.work = new float[vocabSize];
        boolean truncating = !params.isGreedy();
        this.heap = truncating ? new long[vocabSize] : new long[0];
        this.ranked = truncating ? new int[vocabSize] : new int[0];
        this.weights = truncating ? new double[vocabSize] : new double[0];
        this.history = new int[params.penalizes() ? params.penaltyWindow() : 0];
        this.seen = params.penalizes() ? new int[vocabSize] : new int[0];
    }

    public SamplingParams params() { return params; }

    public int vocabSize() { return vocabSize; }

    /**
     * Chooses the next token from {@code logits[offset .. offset + vocabSize)}, which is not
     * modified.
     *
     * @throws IllegalArgumentException if the row does not fit the array, or has no finite maximum
     *                                  (all {@code -inf} or NaN)
     */
    public int sample(float[] logits, int offset) {
        if (offset < 0 || (long) offset + vocabSize > logits.length) {
            throw new IllegalArgumentException("a logits row of " + vocabSize + " at offset " + offset
                    + " does not fit an array of " + logits.length);
        }
        float[] w = work;
        System.arraycopy(logits, offset, w, 0, vocabSize);
        if (params.penalizes()) applyPenalty(w);
        if (params.isGreedy()) return argmax(w);

        int kLimit = params.topK() > 0 ? Math.min(params.topK(), vocabSize) : vocabSize;
        if (kLimit == vocabSize && params.topP() >= 1f && params.minP() <= 0f) return drawFromAll(w);

        buildHeap(w);
        take(1);
        float max = w[ranked[0]];
        checkFinite(max);
        int kept = kLimit;
        if (kLimit < vocabSize) take(kLimit);

        if (params.topP() < 1f) {
            // The mass is that of the softmax over what top-k left (all tokens when top-k is off).
            double z = 0;
            if (kLimit < vocabSize) {
                for (int i = 0; i < kLimit; i++) z += Math.exp(w[ranked[i]] - max);
            } else {
                for (int i = 0; i < vocabSize; i++) z += Math.exp(w[i] - max);
            }
            double cum = 0;
            int i = 0;
            while (true) {
                take(i + 1);
                cum += Math.exp(w[ranked[i]] - max) / z;
                i++;
                if (cum >= params.topP() || i == kLimit) break;
            }
            kept = i;
        }

        if (params.minP() > 0f) {
            // llama.cpp compares in logit space: p_i >= minP * p_max  <=>  logit_i >= max + ln(minP).
            float floor = max + (float) Math.log(params.minP());
            int i = 1;
            while (i < kept) {
                take(i + 1);
                if (w[ranked[i]] < floor) break;
                i++;
            }
            kept = i;
        }

        double invT = 1.0 / params.temperature();
        double sum = 0;
        for (int i = 0; i < kept; i++) {
            double p = Math.exp((w[ranked[i]] - max) * invT);
            weights[i] = p;
            sum += p;
        }
        double u = random.nextDouble() * sum;
        for (int i = 0; i < kept; i++) {
            u -= weights[i];
            if (u < 0) return ranked[i];
        }
        return ranked[kept - 1]; // rounding left u at the very end
    }

    /** Records a token appended to the sequence (for the repetition penalty). */
    public void accept(int token) {
        if (token < 0 || token >= vocabSize) {
            throw new IllegalArgumentException("token " + token + " outside the vocabulary of " + vocabSize);
        }
        if (history.length == 0) return;
        history[historyNext] = token;
        historyNext = (historyNext + 1) % history.length;
        if (historyCount < history.length) historyCount++;
    }

    /** {@link #accept(int)} for each token in order. */
    public void acceptAll(int[] tokens) {
        for (int t : tokens) accept(t);
    }

    /** Forgets the token history; the random generator continues where it is. */
    public void resetHistory() {
        historyCount = 0;
        historyNext = 0;
    }

    /**
     * llama.cpp's repeat penalty: once per distinct token of the window, however often it occurs;
     * dividing a negative logit would raise it, so those are multiplied instead.
     */
    private void applyPenalty(float[] w) {
        if (historyCount == 0) return;
        if (++stamp == Integer.MAX_VALUE) {
            java.util.Arrays.fill(seen, 0);
            stamp = 1;
        }
        float penalty = params.repetitionPenalty();
        for (int i = 0; i < historyCount; i++) {
            int t = history[i];
            if (seen[t] == stamp) continue;
            seen[t] = stamp;
            w[t] = w[t] <= 0f ? w[t] * penalty : w[t] / penalty;
        }
    }

    /** The largest logit, the lowest id on ties. */
    private int argmax(float[] w) {
        int best = 0;
        float bestValue = w[0];
        for (int i = 1; i < vocabSize; i++) {
            if (w[i] > bestValue || (bestValue != bestValue && w[i] == w[i])) { // a NaN never wins over a number
                bestValue = w[i];
                best = i;
            }
        }
        checkFinite(bestValue);
        return best;
    }

    /** Temperature + draw over the whole vocabulary, in id order (nothing to rank). */
    private int drawFromAll(float[] w) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocabSize; i++) if (w[i] > max) max = w[i];
        checkFinite(max);
        double invT = 1.0 / params.temperature();
        double sum = 0;
        for (int i = 0; i < vocabSize; i++) {
            double p = Math.exp((w[i] - max) * invT);
            weights[i] = p;
            sum += p;
        }
        double u = random.nextDouble() * sum;
        int last = 0;
        for (int i = 0; i < vocabSize; i++) {
            if (weights[i] == 0) continue;
            last = i;
            u -= weights[i];
            if (u < 0) return i;
        }
        return last;
    }

    private static void checkFinite(float max) {
        if (!(max > Float.NEGATIVE_INFINITY) || Float.isNaN(max)) {
            throw new IllegalArgumentException("logits row has no finite maximum (all -inf or NaN): " + max);
        }
    }

    // ---- ranking heap ----

    /**
     * A long that orders candidates: ascending key = descending logit, then ascending id. The high
     * half is the float's bits mapped to an int of the same order and complemented; the low half
     * the id.
     */
    private static long key(float logit, int id) {
        int bits = Float.floatToRawIntBits(logit);
        int ordered = bits ^ ((bits >> 31) & 0x7fffffff);
        return ((long) ~ordered << 32) | id;
    }

    private void buildHeap(float[] w) {
        long[] h = heap;
        for (int i = 0; i < vocabSize; i++) h[i] = key(w[i], i);
        heapSize = vocabSize;
        for (int i = (heapSize >>> 1) - 1; i >= 0; i--) siftDown(i);
        rankedCount = 0;
    }

    /** Moves candidates from the heap to {@code ranked} until {@code count} are there. */
    private void take(int count) {
        while (rankedCount < count) {
            long top = heap[0];
            heap[0] = heap[--heapSize];
            if (heapSize > 0) siftDown(0);
            ranked[rankedCount++] = (int) top;
        }
    }

    private void siftDown(int i) {
        long[] h = heap;
        int n = heapSize;
        long v = h[i];
        while (true) {
            int c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && h[c + 1] < h[c]) c++;
            if (h[c] >= v) break;
            h[i] = h[c];
            i = c;
        }
        h[i] = v;
    }
}
