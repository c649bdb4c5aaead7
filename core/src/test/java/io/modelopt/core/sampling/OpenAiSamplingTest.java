package io.modelopt.core.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Logit bias and OpenAI's presence and frequency penalties, against a float64 reference. */
class OpenAiSamplingTest {

    /**
     * The reference, in double: bias, then llama.cpp's repetition penalty over the distinct tokens
     * of the window, then {@code -= frequency * count + presence * (count > 0)} over the generated
     * tokens.
     */
    private static double[] reference(float[] row, Map<Integer, Float> bias, float repetition, int[] window,
                                      int[] counts, float presence, float frequency) {
        double[] x = new double[row.length];
        for (int i = 0; i < row.length; i++) x[i] = row[i];
        for (var e : bias.entrySet()) x[e.getKey()] += e.getValue();
        boolean[] inWindow = new boolean[row.length];
        for (int t : window) inWindow[t] = true;
        for (int t = 0; t < row.length; t++) {
            if (inWindow[t]) x[t] = x[t] <= 0 ? x[t] * repetition : x[t] / repetition;
            x[t] -= frequency * (double) counts[t] + presence * (counts[t] > 0 ? 1.0 : 0.0);
        }
        return x;
    }

    private static int argmax(double[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
        return best;
    }

    @Test
    void biasAndPenaltiesMatchTheFloat64ReferenceOnRandomRows() {
        SplittableRandom r = new SplittableRandom(2026);
        int vocab = 300, promptLen = 20, window = 16;
        for (int trial = 0; trial < 20; trial++) {
            Map<Integer, Float> bias = new HashMap<>();
            for (int i = 0; i < 10; i++) bias.put(r.nextInt(vocab), (float) (r.nextDouble() * 200 - 100) / (i < 5 ? 20 : 1));
            float presence = (float) (r.nextDouble() * 4 - 2), frequency = (float) (r.nextDouble() * 4 - 2);
            float repetition = trial % 2 == 0 ? 1f : (float) (0.5 + r.nextDouble() * 1.5);
            SamplingParams greedy = SamplingParams.builder().presencePenalty(presence).frequencyPenalty(frequency)
                    .logitBias(bias).repetitionPenalty(repetition).penaltyWindow(window).build();
            SamplingParams topOne = greedy.toBuilder().temperature(1.3f).topK(1).seed(trial).build();
            Sampler g = new Sampler(greedy, vocab), k1 = new Sampler(topOne, vocab);

            int[] prompt = new int[promptLen];
            for (int i = 0; i < promptLen; i++) prompt[i] = r.nextInt(vocab);
            g.acceptPrompt(prompt);
            k1.acceptPrompt(prompt);
            int[] history = prompt.clone();
            int[] counts = new int[vocab];
            for (int step = 0; step < 30; step++) {
                float[] row = new float[vocab];
                for (int i = 0; i < vocab; i++) row[i] = (float) (r.nextGaussian() * 3);
                int[] win = java.util.Arrays.copyOfRange(history, Math.max(0, history.length - window), history.length);
                double[] want = reference(row, bias, repetition, repetition == 1f ? new int[0] : win, counts, presence, frequency);
                float[] got = g.adjustedRow(row, 0);
                for (int i = 0; i < vocab; i++) {
                    assertEquals(want[i], got[i], 1e-5 * Math.max(1, Math.abs(want[i])), "trial " + trial + " step " + step + " token " + i);
                }
                int best = argmax(want);
                int gt = g.sample(row, 0), kt = k1.sample(row, 0);
                // float rounding may only matter within a hair of a tie
                assertTrue(want[gt] >= want[best] - 1e-4, "greedy chose " + gt + " (" + want[gt] + ") over " + best + " (" + want[best] + ")");
                assertEquals(gt, kt, "top-k 1 at a temperature agrees with greedy on the adjusted row");
                // continue the sequence with a mix of repeats and fresh tokens
                int next = step % 3 == 0 ? gt : r.nextInt(step % 2 == 0 ? 8 : vocab);
                g.accept(next);
                k1.accept(next);
                counts[next]++;
                history = java.util.Arrays.copyOf(history, history.length + 1);
                history[history.length - 1] = next;
            }
        }
    }

    @Test
    void presenceCountsOnceFrequencyCountsEachOccurrence() {
        float[] logits = {2.0f, 1.5f, 1.4f, 0f};
        int[] generated = {0, 0, 0, 1};
        Sampler presence = sampler(SamplingParams.builder().presencePenalty(0.3f).build(), generated);
        assertArrayEquals(new float[] {1.7f, 1.2f, 1.4f, 0f}, presence.adjustedRow(logits, 0), 1e-6f);
        assertEquals(0, presence.sample(logits, 0)); // 1.7 > 1.4
        Sampler frequency = sampler(SamplingParams.builder().frequencyPenalty(0.3f).build(), generated);
        assertArrayEquals(new float[] {1.1f, 1.2f, 1.4f, 0f}, frequency.adjustedRow(logits, 0), 1e-6f);
        assertEquals(2, frequency.sample(logits, 0)); // 2.0 - 3 * 0.3 = 1.1 < 1.4
        Sampler both = sampler(SamplingParams.builder().presencePenalty(0.25f).frequencyPenalty(0.5f).build(), generated);
        assertArrayEquals(new float[] {0.25f, 0.75f, 1.4f, 0f}, both.adjustedRow(logits, 0), 1e-6f);
        // negative values reward repetition
        Sampler reward = sampler(SamplingParams.builder().presencePenalty(-1f).build(), new int[] {3});
        assertEquals(0, reward.sample(logits, 0)); // token 3: 0 + 1 = 1 < 2, not enough
        Sampler bigReward = sampler(SamplingParams.builder().presencePenalty(-2f).frequencyPenalty(-2f).build(), new int[] {3});
        assertEquals(3, bigReward.sample(logits, 0)); // 0 + 4 = 4 > 2
    }

    private static Sampler sampler(SamplingParams p, int[] generated) {
        Sampler s = new Sampler(p, 4);
        for (int t : generated) s.accept(t);
        return s;
    }

    @Test
    void thePromptDoesNotCountButResetForgetsTheCounts() {
        float[] logits = {2.0f, 1.5f};
        Sampler s = new Sampler(SamplingParams.builder().presencePenalty(1f).frequencyPenalty(1f).build(), 2);
        s.acceptPrompt(new int[] {0, 0, 0});
        assertEquals(0, s.sample(logits, 0), "prompt tokens are not penalized");
        s.accept(0);
        assertEquals(1, s.sample(logits, 0)); // 2 - 2 = 0 < 1.5
        s.resetHistory();
        assertEquals(0, s.sample(logits, 0));
        // the llama.cpp repetition penalty does see the prompt
        Sampler rep = new Sampler(SamplingParams.builder().repetitionPenalty(2f).build(), 2);
        rep.acceptPrompt(new int[] {0});
        assertEquals(1, rep.sample(logits, 0)); // 2 / 2 = 1 < 1.5
    }

    @Test
    void greedyHonoursABiasThatFlipsTheArgmax() {
        float[] logits = {0.5f, 3.0f, 2.9f, -1f};
        assertEquals(1, new Sampler(SamplingParams.greedy(), 4).sample(logits, 0));
        assertEquals(2, new Sampler(SamplingParams.builder().logitBias(Map.of(2, 0.2f)).build(), 4).sample(logits, 0));
        assertEquals(0, new Sampler(SamplingParams.builder().logitBias(Map.of(1, -100f, 2, -100f)).build(), 4).sample(logits, 0));
        // the bias comes before the truncation: with it, top-k 1 keeps token 3
        Sampler k1 = new Sampler(SamplingParams.builder().temperature(1f).topK(1).logitBias(Map.of(3, 100f)).seed(1).build(), 4);
        for (int i = 0; i < 20; i++) assertEquals(3, k1.sample(logits, 0));
        // -100 bans a token from sampling in practice
        Sampler all = new Sampler(SamplingParams.builder().temperature(1f).topK(0).topP(1f).minP(0f).logitBias(Map.of(1, -100f)).seed(5).build(), 4);
        for (int i = 0; i < 2000; i++) assertTrue(all.sample(logits, 0) != 1);
    }

    @Test
    void invalidBiasAndPenaltiesAreRejectedNamingTheValue() {
        assertMessage("presence penalty", "2.5", () -> SamplingParams.builder().presencePenalty(2.5f).build());
        assertMessage("presence penalty", "NaN", () -> SamplingParams.builder().presencePenalty(Float.NaN).build());
        assertMessage("frequency penalty", "-2.01", () -> SamplingParams.builder().frequencyPenalty(-2.01f).build());
        assertMessage("logit bias", "-3", () -> SamplingParams.builder().logitBias(Map.of(-3, 1f)).build());
        assertMessage("token 7", "100.5", () -> SamplingParams.builder().logitBias(Map.of(7, 100.5f)).build());
        assertMessage("token 7", "Infinity", () -> SamplingParams.builder().logitBias(Map.of(7, Float.POSITIVE_INFINITY)).build());
        Map<Integer, Float> nullValue = new HashMap<>();
        nullValue.put(4, null);
        assertMessage("token 4", "null", () -> SamplingParams.builder().logitBias(nullValue).build());
        SamplingParams outside = SamplingParams.builder().logitBias(Map.of(3, 1f, 10, 1f, 12, -1f)).build();
        assertMessage("token id 10", "vocabulary of 10", () -> new Sampler(outside, 10));
        assertMessage("token id 10", "vocabulary of 10", () -> Sampler.checkLogitBias(outside, 10));
        Sampler.checkLogitBias(outside, 13); // fits
        // the edges are allowed, and the map is an immutable copy
        Map<Integer, Float> edges = new HashMap<>(Map.of(0, -100f, 1, 100f));
        SamplingParams ok = SamplingParams.builder().presencePenalty(-2f).frequencyPenalty(2f).logitBias(edges).build();
        edges.put(2, 5f);
        assertEquals(Map.of(0, -100f, 1, 100f), ok.logitBias());
        assertThrows(UnsupportedOperationException.class, () -> ok.logitBias().put(3, 1f));
        assertEquals(ok, ok.toBuilder().build());
    }

    private static void assertMessage(String part, String value, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(x.getMessage().contains(part) && x.getMessage().contains(value), x.getMessage());
    }
}
