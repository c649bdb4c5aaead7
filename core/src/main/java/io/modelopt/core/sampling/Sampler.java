package io.modelopt.core.sampling;

import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * Chooses tokens for one sequence from rows of logits according to {@link SamplingParams}.
 *
 * <p>Stages (see {@link SamplingParams} for why this order): logit bias → repetition penalty →
 * frequency and presence penalties → (greedy: argmax) → top-k → top-p → min-p → temperature →
 * draw. Candidates are ranked by logit, larger first, the lower token id first on equal logits, so
 * every stage is deterministic.
 *
 * <p>One sampler per sequence: it owns the sequence's random generator (a
 * {@link SplittableRandom} seeded with {@link SamplingParams#seed()}, so the same seed and the same
 * logits give the same tokens), its recent-token history for the repetition penalty and the counts
 * of its generated tokens for the frequency and presence penalties (kept up to date on each
 * {@link #accept}, and applied to the distinct tokens generated so far, not the whole vocabulary).
 * It works in arrays sized to the vocabulary once, at construction, so sampling a token allocates
 * nothing. The
 * ranking is a binary heap built in O(vocab) from which only as many candidates are taken as the
 * stages need (top-k's k, or until top-p's mass / min-p's floor is reached), rather than a full
 * sort of the vocabulary for every token.
 *
 * <p>{@link #sample} does not record the token: give the prompt to {@link #acceptPrompt} (it enters
 * the repetition penalty's window only, as llama.cpp has it; OpenAI's penalties count generated
 * tokens only, as vLLM has it), then call {@link #accept(int)} with each generated token that is
 * actually appended to the sequence. Not thread-safe.
 */
public final class Sampler {
    private final SamplingParams params;
    private final int vocabSize;
    private final RandomGenerator random;

    /** The row being sampled, after the bias and the penalties. */
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

    /** The logit bias as parallel arrays in ascending id order (a map would allocate an iterator per token). */
    private final int[] biasIds;
    private final float[] biasValues;
    /** {@code counts[id]}: how often the sequence generated {@code id}; only with a frequency or presence penalty. */
    private final int[] counts;
    /** The distinct generated tokens (those with {@code counts > 0}), {@code distinctCount} of them. */
    private final int[] distinct;
    private int distinctCount;

    /**
     * @throws IllegalArgumentException if the vocabulary is empty, or a logit bias names a token id
     *                                  outside it
     */
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
        checkLogitBias(params, vocabSize);
        Map<Integer, Float> bias = params.logitBias();
        this.biasIds = bias.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        this.biasValues = new float[biasIds.length];
        for (int i = 0; i < biasIds.length; i++) biasValues[i] = bias.get(biasIds[i]);
        boolean counting = params.penalizesGenerated();
        this.counts = counting ? new int[vocabSize] : new int[0];
        this.distinct = counting ? new int[vocabSize] : new int[0];
    }

    /**
     * Checks that every token id of the params' logit bias is inside a vocabulary of
     * {@code vocabSize} (a server checks a request with it before queueing it).
     *
     * @throws IllegalArgumentException naming the first (smallest) id outside it
     */
    public static void checkLogitBias(SamplingParams params, int vocabSize) {
        int worst = -1;
        for (int id : params.logitBias().keySet()) {
            if (id >= vocabSize && (worst < 0 || id < worst)) worst = id;
        }
        if (worst >= 0) {
            throw new IllegalArgumentException("logit bias names token id " + worst + ", outside the vocabulary of "
                    + vocabSize + " (ids 0.." + (vocabSize - 1) + ")");
        }
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
        adjust(logits, offset, w);
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

    /**
     * The row {@code logits[offset .. offset + vocabSize)} after the bias and the penalties, as
     * {@link #sample} ranks it, in a new array (for tests and diagnostics; sampling does not call it).
     */
    float[] adjustedRow(float[] logits, int offset) {
        float[] out = new float[vocabSize];
        adjust(logits, offset, out);
        return out;
    }

    /** Copies the row into {@code w} and applies, in order, the bias, the repetition penalty and the OpenAI penalties. */
    private void adjust(float[] logits, int offset, float[] w) {
        System.arraycopy(logits, offset, w, 0, vocabSize);
        for (int i = 0; i < biasIds.length; i++) w[biasIds[i]] += biasValues[i];
        if (params.penalizes()) applyPenalty(w);
        if (params.penalizesGenerated()) applyGeneratedPenalties(w);
    }

    /**
     * Records a token generated and appended to the sequence: it enters the repetition penalty's
     * window and the counts of the frequency and presence penalties.
     */
    public void accept(int token) {
        checkToken(token);
        remember(token);
        if (counts.length > 0 && counts[token]++ == 0) distinct[distinctCount++] = token;
    }

    /** {@link #accept(int)} for each generated token in order. */
    public void acceptAll(int[] tokens) {
        for (int t : tokens) accept(t);
    }

    /**
     * Records the prompt: its tokens enter the repetition penalty's window (llama.cpp's penalty
     * sees the prompt) but not the counts of the frequency and presence penalties (OpenAI's and
     * vLLM's count generated tokens only).
     */
    public void acceptPrompt(int[] prompt) {
        for (int t : prompt) checkToken(t);
        for (int t : prompt) remember(t);
    }

    /** Forgets the token history and the generated-token counts; the random generator continues where it is. */
    public void resetHistory() {
        historyCount = 0;
        historyNext = 0;
        for (int i = 0; i < distinctCount; i++) counts[distinct[i]] = 0;
        distinctCount = 0;
    }

    private void checkToken(int token) {
        if (token < 0 || token >= vocabSize) {
            throw new IllegalArgumentException("token " + token + " outside the vocabulary of " + vocabSize);
        }
    }

    private void remember(int token) {
        if (history.length == 0) return;
        history[historyNext] = token;
        historyNext = (historyNext + 1) % history.length;
        if (historyCount < history.length) historyCount++;
    }

    /**
     * OpenAI's penalties, {@code logit -= frequency * count + presence * (count > 0)}, over the
     * distinct generated tokens only (every other token has count 0 and is left alone).
     */
    private void applyGeneratedPenalties(float[] w) {
        float frequency = params.frequencyPenalty(), presence = params.presencePenalty();
        for (int i = 0; i < distinctCount; i++) {
            int t = distinct[i];
            w[t] -= frequency * counts[t] + presence;
        }
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
