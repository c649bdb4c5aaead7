package io.modelopt.core.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Raw logprobs and their top-N against a float64 reference that sorts the whole row. */
class LogprobsTest {

    /** Log-softmax in double, the plain way. */
    private static double[] logSoftmax(float[] row, int offset, int vocab) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) max = Math.max(max, row[offset + i]);
        double z = 0;
        for (int i = 0; i < vocab; i++) z += Math.exp(row[offset + i] - max);
        double[] out = new double[vocab];
        for (int i = 0; i < vocab; i++) out[i] = row[offset + i] - max - Math.log(z);
        return out;
    }

    @Test
    void matchTheReferenceOnRandomRows() {
        SplittableRandom r = new SplittableRandom(77);
        for (int trial = 0; trial < 50; trial++) {
            int vocab = 1 + r.nextInt(trial < 10 ? 25 : 3000), offset = r.nextInt(5), topN = r.nextInt(TokenLogprobs.MAX_TOP_LOGPROBS + 1);
            float[] buf = new float[offset + vocab + 3];
            for (int i = 0; i < buf.length; i++) {
                // coarse values make ties common, so the lower-id-first rule is exercised
                buf[i] = trial % 3 == 0 ? (float) r.nextInt(6) : (float) (r.nextGaussian() * 4);
            }
            if (vocab > 3 && trial % 4 == 1) buf[offset + 2] = Float.NEGATIVE_INFINITY;
            int token = r.nextInt(vocab);
            double[] want = logSoftmax(buf, offset, vocab);
            TokenLogprobs got = Logprobs.of(buf, offset, vocab, token, topN);
            assertEquals(token, got.token());
            assertEquals(want[token], got.logprob(), 1e-12);

            Integer[] order = new Integer[vocab];
            for (int i = 0; i < vocab; i++) order[i] = i;
            Arrays.sort(order, Comparator.<Integer>comparingDouble(i -> -want[i]).thenComparingInt(i -> i));
            int n = Math.min(topN, vocab);
            assertEquals(n, got.top().size(), "trial " + trial);
            for (int k = 0; k < n; k++) {
                assertEquals(order[k], got.top().get(k).token(), "trial " + trial + " rank " + k);
                assertEquals(want[order[k]], got.top().get(k).logprob(), 1e-12);
            }
        }
    }

    @Test
    void probabilitiesSumToOneOverTheVocabulary() {
        SplittableRandom r = new SplittableRandom(5);
        int vocab = 5000;
        float[] row = new float[vocab];
        for (int i = 0; i < vocab; i++) row[i] = (float) (r.nextGaussian() * 6 + 20); // a large offset: the max shift matters
        double sum = 0;
        for (int t = 0; t < vocab; t++) {
            double lp = Logprobs.of(row, 0, vocab, t, 0).logprob();
            assertTrue(lp <= 0, "logprob " + lp);
            sum += Math.exp(lp);
        }
        assertEquals(1.0, sum, 1e-9);
        TokenLogprobs all = Logprobs.of(row, 0, 20, 0, 20);
        assertEquals(1.0, all.top().stream().mapToDouble(e -> Math.exp(e.logprob())).sum(), 1e-12, "the top 20 of 20 is all of it");
    }

    @Test
    void topZeroOnlyTheChosenAndSmallVocabulariesListFewer() {
        float[] row = {1f, 3f, 2f};
        TokenLogprobs none = Logprobs.of(row, 0, 3, 2, 0);
        assertEquals(List.of(), none.top());
        TokenLogprobs five = Logprobs.of(row, 0, 3, 2, 5);
        assertEquals(List.of(1, 2, 0), five.top().stream().map(TokenLogprobs.TopLogprob::token).toList());
        double z = Math.log(Math.exp(1) + Math.exp(3) + Math.exp(2));
        assertEquals(2 - z, five.logprob(), 1e-12);
        assertEquals(five.logprob(), five.top().get(1).logprob());
        assertThrows(UnsupportedOperationException.class, () -> five.top().clear());
    }

    @Test
    void invalidArgumentsAreRejected() {
        float[] row = {0f, 1f};
        assertMessage("[0, 20]", () -> Logprobs.of(row, 0, 2, 0, 21));
        assertMessage("[0, 20]", () -> Logprobs.of(row, 0, 2, 0, -1));
        assertMessage("outside the vocabulary", () -> Logprobs.of(row, 0, 2, 2, 1));
        assertMessage("does not fit", () -> Logprobs.of(row, 1, 2, 0, 1));
        assertMessage("no finite maximum", () -> Logprobs.of(new float[] {Float.NEGATIVE_INFINITY, Float.NaN}, 0, 2, 0, 1));
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(x.getMessage().contains(part), x.getMessage());
    }
}
