package io.modelopt.core.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SamplerTest {

    private static SamplingParams.Builder sampling() {
        // Every truncation stage off unless a test turns it on.
        return SamplingParams.builder().temperature(1f).topK(0).topP(1f).minP(0f).seed(42);
    }

    /** Ids drawn at least once in {@code draws} samples. */
    private static Set<Integer> support(SamplingParams p, float[] logits, int draws) {
        Sampler s = new Sampler(p, logits.length);
        Set<Integer> seen = new TreeSet<>();
        for (int i = 0; i < draws; i++) seen.add(s.sample(logits, 0));
        return seen;
    }

    private static float[] randomLogits(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] l = new float[n];
        for (int i = 0; i < n; i++) l[i] = (float) (r.nextGaussian() * 3);
        return l;
    }

    @Test
    void greedyIsArgmaxWithLowestIdOnTies() {
        Sampler s = new Sampler(SamplingParams.greedy(), 6);
        assertEquals(3, s.sample(new float[] {0.1f, -2f, 1.5f, 4f, 3.9f, -7f}, 0));
        assertEquals(1, s.sample(new float[] {0f, 5f, 2f, 5f, 5f, 1f}, 0));
        // reads the row at the offset, and leaves the array alone
        float[] two = {9f, 0, 0, 0, 0, 0, 0f, 1f, 2f, 8f, 2f, 1f};
        assertEquals(3, s.sample(two, 6));
        assertEquals(9f, two[0]);
        assertEquals(8f, two[9]);

        float[] big = randomLogits(5000, 7);
        int expected = 0;
        for (int i = 1; i < big.length; i++) if (big[i] > big[expected]) expected = i;
        assertEquals(expected, new Sampler(SamplingParams.greedy(), big.length).sample(big, 0));
    }

    @Test
    void topKOneIsGreedyWhateverTheTemperature() {
        float[] logits = randomLogits(1000, 3);
        int greedy = new Sampler(SamplingParams.greedy(), logits.length).sample(logits, 0);
        Sampler s = new Sampler(sampling().topK(1).temperature(5f).build(), logits.length);
        for (int i = 0; i < 200; i++) assertEquals(greedy, s.sample(logits, 0));
        // ties: top-1 of equal logits is the lowest id
        Sampler tie = new Sampler(sampling().topK(1).build(), 4);
        for (int i = 0; i < 50; i++) assertEquals(1, tie.sample(new float[] {0f, 3f, 3f, 3f}, 0));
    }

    @Test
    void topKKeepsExactlyTheKLargest() {
        float[] logits = {0f, 1f, 2f, 3f, 4f, 5f};
        assertEquals(Set.of(3, 4, 5), support(sampling().topK(3).temperature(10f).build(), logits, 3000));
    }

    @Test
    void topPKeepsTheSmallestPrefixReachingTheMass() {
        // probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625 (logits = ln p)
        float[] logits = {(float) Math.log(0.0625), (float) Math.log(0.5), (float) Math.log(0.125),
                (float) Math.log(0.25), (float) Math.log(0.0625)};
        // 0.5 < 0.6 <= 0.75 -> {1, 3}
        assertEquals(Set.of(1, 3), support(sampling().topP(0.6f).build(), logits, 3000));
        // 0.75 < 0.8 <= 0.875 -> {1, 3, 2}
        assertEquals(Set.of(1, 2, 3), support(sampling().topP(0.8f).build(), logits, 3000));
        // 0.3 <= 0.5: only the top token
        assertEquals(Set.of(1), support(sampling().topP(0.3f).build(), logits, 500));
        // 0.9 needs 0.9375: the equal 0.0625 tokens 0 and 4 are ranked by id, so 0 comes in, 4 does not
        assertEquals(Set.of(0, 1, 2, 3), support(sampling().topP(0.9f).build(), logits, 5000));
    }

    @Test
    void topPMassIsThatOfTheTopKSurvivors() {
        // after top-k 2 the survivors have 0.5/(0.75) = 2/3 and 1/3; top-p 0.6 keeps only the first
        float[] logits = {(float) Math.log(0.5), (float) Math.log(0.25), (float) Math.log(0.25)};
        assertEquals(Set.of(0), support(sampling().topK(2).topP(0.6f).build(), logits, 500));
        // without top-k the first token's 0.5 is below 0.6
        assertEquals(Set.of(0, 1), support(sampling().topP(0.6f).build(), logits, 2000));
    }

    @Test
    void minPKeepsTokensWithAtLeastThatFractionOfTheTop() {
        // probabilities proportional to 1, 0.5, 0.2, 0.09, 0.3
        float[] logits = {0f, (float) Math.log(0.5), (float) Math.log(0.2), (float) Math.log(0.09), (float) Math.log(0.3)};
        assertEquals(Set.of(0, 1, 4), support(sampling().minP(0.25f).build(), logits, 3000));
        assertEquals(Set.of(0, 1, 2, 4), support(sampling().minP(0.1f).build(), logits, 3000));
        assertEquals(Set.of(0), support(sampling().minP(0.9f).build(), logits, 500));
        // combined with top-p, the smaller set wins
        assertEquals(Set.of(0, 1), support(sampling().minP(0.1f).topP(0.7f).build(), logits, 3000));
    }

    @Test
    void fixedSeedRepeatsAndDifferentSeedsDiffer() {
        float[] logits = randomLogits(512, 11);
        SamplingParams p = SamplingParams.builder().temperature(1.5f).seed(1234).build(); // llama.cpp's top-k/p/min-p defaults
        int[] a = draw(p, logits, 100), b = draw(p, logits, 100);
        assertArrayEquals(a, b);
        assertNotEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(draw(p.toBuilder().seed(1235).build(), logits, 100)));
        SamplingParams all = sampling().seed(99).build();
        assertArrayEquals(draw(all, logits, 100), draw(all, logits, 100));
    }

    private static int[] draw(SamplingParams p, float[] logits, int n) {
        Sampler s = new Sampler(p, logits.length);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = s.sample(logits, 0);
        return out;
    }

    @Test
    void temperatureOneMatchesSoftmax() {
        float[] logits = {1.2f, -0.3f, 0.5f, 2.0f, 0.0f, -1.0f, 1.7f, 0.9f};
        for (SamplingParams p : new SamplingParams[] {
                sampling().seed(2024).build(),                          // the whole-vocabulary path
                sampling().topK(8).minP(1e-6f).seed(2024).build()}) {   // the ranked path, nothing cut
            chiSquare(p, logits, 1.0);
        }
        // temperature 2: softmax(logits / 2)
        chiSquare(sampling().temperature(2f).seed(7).build(), logits, 2.0);
    }

    private static void chiSquare(SamplingParams p, float[] logits, double t) {
        int n = logits.length, draws = 200_000;
        double[] expected = new double[n];
        double z = 0;
        for (int i = 0; i < n; i++) z += expected[i] = Math.exp(logits[i] / t);
        long[] counts = new long[n];
        Sampler s = new Sampler(p, n);
        for (int i = 0; i < draws; i++) counts[s.sample(logits, 0)]++;
        double chi2 = 0;
        for (int i = 0; i < n; i++) {
            double e = expected[i] / z * draws;
            chi2 += (counts[i] - e) * (counts[i] - e) / e;
        }
        // 7 degrees of freedom: P(chi2 > 24.3) = 0.001; the seed is fixed, so this is deterministic
        assertTrue(chi2 < 24.3, "chi-square " + chi2 + " for counts " + java.util.Arrays.toString(counts));
    }

    @Test
    void repetitionPenaltyDividesPositiveAndMultipliesNegativeLogits() {
        // token 0: 2.0 -> 1.0 with penalty 2; token 1: 1.5 untouched; token 2: -0.5 -> -1.0
        SamplingParams p = SamplingParams.builder().repetitionPenalty(2f).penaltyWindow(3).build(); // greedy
        Sampler s = new Sampler(p, 4);
        float[] logits = {2.0f, 1.5f, -0.5f, -0.9f};
        assertEquals(0, s.sample(logits, 0));
        s.accept(0);
        assertEquals(1, s.sample(logits, 0)); // 1.0 < 1.5
        s.accept(1);
        s.accept(1); // counted once however often it occurs: 1.5 -> 0.75, not 0.375
        // 0 -> 1.0, 1 -> 0.75
        assertEquals(0, s.sample(logits, 0));
        float[] close = {1.4f, 1.5f, -0.5f, -0.9f};
        assertEquals(1, s.sample(close, 0)); // 0.7 < 0.75
        // window 3 holds [0, 1, 1]; one more token pushes 0 out
        s.accept(3);  // window [1, 1, 3]: 0 is back at 1.4 > 0.75
        assertEquals(0, s.sample(close, 0));

        // negative logits: -0.5 * 2 = -1.0 falls below -0.9
        Sampler neg = new Sampler(p, 2);
        float[] l2 = {-0.5f, -0.9f};
        assertEquals(0, neg.sample(l2, 0));
        neg.accept(0);
        assertEquals(1, neg.sample(l2, 0));
        // exact values with the penalty on the ranked path: 2.0/2 = 1.0 vs 1.0 -> tie, top-1 takes id 0
        Sampler ranked = new Sampler(p.toBuilder().temperature(1f).topK(1).build(), 2);
        ranked.accept(0);
        assertEquals(0, ranked.sample(new float[] {2.0f, 1.0f}, 0));
        assertEquals(1, ranked.sample(new float[] {2.0f, 1.0001f}, 0));
        ranked.resetHistory();
        assertEquals(0, ranked.sample(new float[] {2.0f, 1.0001f}, 0));
    }

    @Test
    void invalidParametersAreRejectedWithTheValue() {
        assertMessage("temperature", () -> SamplingParams.builder().temperature(-0.1f).build());
        assertMessage("temperature", () -> SamplingParams.builder().temperature(Float.NaN).build());
        assertMessage("top-k", () -> SamplingParams.builder().topK(-1).build());
        assertMessage("top-p", () -> SamplingParams.builder().topP(0f).build());
        assertMessage("top-p", () -> SamplingParams.builder().topP(1.5f).build());
        assertMessage("min-p", () -> SamplingParams.builder().minP(-0.01f).build());
        assertMessage("min-p", () -> SamplingParams.builder().minP(2f).build());
        assertMessage("repetition penalty", () -> SamplingParams.builder().repetitionPenalty(0f).build());
        assertMessage("window", () -> SamplingParams.builder().penaltyWindow(-1).build());
        assertMessage("vocabulary", () -> new Sampler(SamplingParams.greedy(), 0));
        Sampler s = new Sampler(SamplingParams.greedy(), 4);
        assertMessage("does not fit", () -> s.sample(new float[6], 3));
        assertMessage("outside the vocabulary", () -> s.accept(4));
        float[] dead = {Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
        assertMessage("no finite maximum", () -> s.sample(dead, 0));
        assertMessage("no finite maximum", () -> new Sampler(sampling().build(), 4).sample(dead, 0));
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(x.getMessage().contains(part), x.getMessage());
    }

    @Test
    void buildDrawsAndRecordsASeedWhenNoneIsGiven() {
        SamplingParams a = SamplingParams.builder().temperature(1f).build();
        SamplingParams b = SamplingParams.builder().temperature(1f).build();
        assertNotEquals(a.seed(), b.seed());
        float[] logits = randomLogits(64, 5);
        assertArrayEquals(draw(a, logits, 50), draw(a.toBuilder().build(), logits, 50));
    }
}
