package io.modelopt.core.sampling;

import java.util.List;

/**
 * Computes {@link TokenLogprobs} from a raw logits row: the log-softmax in double precision, the
 * chosen token's entry and the {@code topN} largest. Stateless.
 *
 * <p>The row is taken as the model gave it (vLLM's default {@code raw_logprobs}): the logit bias,
 * the penalties, the temperature and top-k/top-p/min-p do not enter, so the numbers are comparable
 * across requests whatever their sampling. A NaN logit counts as {@code -inf} (probability 0).
 *
 * <p>Cost: two passes over the vocabulary for the normalizer and one for the top entries, kept in a
 * bounded heap of {@code topN} (O(vocab · log topN), no sort of the vocabulary).
 */
public final class Logprobs {
    private Logprobs() {}

    /**
     * @param logits    the array holding the row {@code logits[offset .. offset + vocabSize)} (not modified)
     * @param token     the chosen token
     * @param topN      how many of the most likely tokens to list, 0 to {@link TokenLogprobs#MAX_TOP_LOGPROBS};
     *                  fewer when the vocabulary is smaller
     * @throws IllegalArgumentException if the row does not fit, the token is outside it, {@code topN}
     *                                  is out of range, or the row has no finite logit
     */
    public static TokenLogprobs of(float[] logits, int offset, int vocabSize, int token, int topN) {
        if (vocabSize < 1 || offset < 0 || (long) offset + vocabSize > logits.length) {
            throw new IllegalArgumentException("a logits row of " + vocabSize + " at offset " + offset
                    + " does not fit an array of " + logits.length);
        }
        if (token < 0 || token >= vocabSize) throw new IllegalArgumentException("token " + token + " outside the vocabulary of " + vocabSize);
        if (topN < 0 || topN > TokenLogprobs.MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be in [0, " + TokenLogprobs.MAX_TOP_LOGPROBS + "], got " + topN);
        }
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < vocabSize; i++) {
            float x = logits[offset + i];
            if (x > max) max = x; // NaN never compares greater
        }
        if (!(max > Double.NEGATIVE_INFINITY) || max == Double.POSITIVE_INFINITY) {
            throw new IllegalArgumentException("logits row has no finite maximum (all -inf or NaN, or +inf): " + max);
        }
        double sum = 0;
        for (int i = 0; i < vocabSize; i++) {
            float x = logits[offset + i];
            if (x == x) sum += Math.exp(x - max);
        }
        double logZ = max + Math.log(sum);

        int n = Math.min(topN, vocabSize);
        // Min-heap of the n best so far by (logprob, then lower id better); its root is the worst kept.
        int[] ids = new int[n];
        double[] lps = new double[n];
        int size = 0;
        for (int i = 0; i < vocabSize && n > 0; i++) {
            double lp = logprob(logits[offset + i], logZ);
            if (size < n) {
                ids[size] = i;
                lps[size] = lp;
                siftUp(ids, lps, size++);
            } else if (better(lp, i, lps[0], ids[0])) {
                ids[0] = i;
                lps[0] = lp;
                siftDown(ids, lps, size);
            }
        }
        // Pop worst-first into the list from the back: best first.
        TokenLogprobs.TopLogprob[] sorted = new TokenLogprobs.TopLogprob[size];
        for (int k = size - 1; k >= 0; k--) {
            sorted[k] = new TokenLogprobs.TopLogprob(ids[0], lps[0]);
            ids[0] = ids[k];
            lps[0] = lps[k];
            siftDown(ids, lps, k);
        }
        return new TokenLogprobs(token, logprob(logits[offset + token], logZ), List.of(sorted));
    }

    private static double logprob(float x, double logZ) {
        return x == x ? x - logZ : Double.NEGATIVE_INFINITY;
    }

    /** Whether (a, ia) ranks before (b, ib): larger logprob, then lower id. */
    private static boolean better(double a, int ia, double b, int ib) {
        return a > b || (a == b && ia < ib);
    }

    private static void siftUp(int[] ids, double[] lps, int i) {
        while (i > 0) {
            int p = (i - 1) >>> 1;
            if (!better(lps[p], ids[p], lps[i], ids[i])) break; // parent is already the worse one
            swap(ids, lps, i, p);
            i = p;
        }
    }

    private static void siftDown(int[] ids, double[] lps, int size) {
        int i = 0;
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) break;
            if (c + 1 < size && better(lps[c], ids[c], lps[c + 1], ids[c + 1])) c++; // the worse child
            if (!better(lps[i], ids[i], lps[c], ids[c])) break;
            swap(ids, lps, i, c);
            i = c;
        }
    }

    private static void swap(int[] ids, double[] lps, int a, int b) {
        int t = ids[a];
        ids[a] = ids[b];
        ids[b] = t;
        double d = lps[a];
        lps[a] = lps[b];
        lps[b] = d;
    }
}
