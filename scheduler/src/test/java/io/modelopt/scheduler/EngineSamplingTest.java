package io.modelopt.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.sampling.Sampler;
import io.modelopt.core.sampling.SamplingParams;
import io.modelopt.core.sampling.TokenLogprobs;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The OpenAI-style extensions through the engine: logprobs on the token events, bias and penalties in its samplers. */
class EngineSamplingTest {
    private static final int GEN = 10;
    private static EngineFixtures f;

    @BeforeAll static void open() { f = EngineFixtures.open("stories260K", false); }

    @AfterAll static void close() { f.close(); }

    /** The events and the raw rows of one request. */
    private record Run(EngineResult result, List<TokenEvent> events, List<float[]> rows) {
        List<TokenEvent> tokens() { return events.stream().filter(e -> !e.isFinish()).toList(); }
    }

    private static Run run(Engine e, EngineRequest request) throws Exception {
        List<float[]> rows = Collections.synchronizedList(new ArrayList<>());
        e.observeLogits((id, sample, pos, buf, off, vocab) -> rows.add(java.util.Arrays.copyOfRange(buf, off, off + vocab)));
        List<TokenEvent> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        RequestHandle h = e.submit(request, new EngineListener() {
            @Override public void onToken(TokenEvent event) { events.add(event); }

            @Override public void onComplete(EngineResult result) { done.countDown(); }
        });
        EngineResult r = h.await();
        done.await();
        e.observeLogits(null);
        return new Run(r, List.copyOf(events), List.copyOf(rows));
    }

    private static int[] prompt() { return new int[] {1, 403, 281, 95, 270}; }

    private static EngineRequest.Builder request(SamplingParams sampling) {
        return EngineRequest.builder().promptTokens(prompt()).ignoreEos(true)
                .options(GenerationOptions.builder().maxTokens(GEN).sampling(sampling).build());
    }

    /** Log-softmax of a row in double, the plain way. */
    private static double[] logSoftmax(float[] row) {
        double max = Double.NEGATIVE_INFINITY;
        for (float x : row) max = Math.max(max, x);
        double z = 0;
        for (float x : row) z += Math.exp(x - max);
        double[] out = new double[row.length];
        for (int i = 0; i < row.length; i++) out[i] = row[i] - max - Math.log(z);
        return out;
    }

    @Test
    void greedyLogprobsListTheChosenTokenFirstAndMatchTheRawRows() throws Exception {
        try (Engine e = f.engine(BatchInvarianceTest.config())) {
            Run run = run(e, request(SamplingParams.greedy()).logprobs(3).build());
            List<TokenEvent> tokens = run.tokens();
            assertEquals(GEN, tokens.size());
            assertEquals(GEN, run.rows().size());
            for (int k = 0; k < GEN; k++) {
                TokenEvent ev = tokens.get(k);
                TokenLogprobs lp = ev.logprobs();
                assertEquals(ev.tokenId(), lp.token());
                assertEquals(3, lp.top().size(), "token " + k);
                assertEquals(ev.tokenId(), lp.top().getFirst().token(), "greedy: the chosen token is the most likely");
                assertEquals(lp.logprob(), lp.top().getFirst().logprob());
                double[] want = logSoftmax(run.rows().get(k));
                assertEquals(want[ev.tokenId()], lp.logprob(), 1e-9);
                for (int i = 0; i < 3; i++) assertEquals(want[lp.top().get(i).token()], lp.top().get(i).logprob(), 1e-9);
                assertTrue(lp.top().get(0).logprob() >= lp.top().get(1).logprob() && lp.top().get(1).logprob() >= lp.top().get(2).logprob());
            }
            assertNull(run.events().getLast().logprobs(), "the finish event carries none");

            Run plain = run(e, request(SamplingParams.greedy()).build());
            assertTrue(plain.events().stream().allMatch(ev -> ev.logprobs() == null), "not asked for: null");
            assertArrayEquals(run.result().tokenIds(), plain.result().tokenIds(), "asking for logprobs changes no token");

            Run zero = run(e, request(SamplingParams.greedy()).logprobs(0).build());
            assertTrue(zero.tokens().stream().allMatch(ev -> ev.logprobs().top().isEmpty() && ev.logprobs().token() == ev.tokenId()));
        }
    }

    @Test
    void biasAndPenaltiesChangeTheTokensAsTheSamplerDoesOnTheRawRows() throws Exception {
        try (Engine e = f.engine(BatchInvarianceTest.config())) {
            int[] greedy = run(e, request(SamplingParams.greedy()).build()).result().tokenIds();
            // a bias of 100 forces a token; the logprobs stay those of the raw rows
            int forced = greedy[0] == 50 ? 51 : 50;
            Run biased = run(e, request(SamplingParams.builder().logitBias(Map.of(forced, 100f)).build()).logprobs(2).build());
            for (TokenEvent ev : biased.tokens()) assertEquals(forced, ev.tokenId());
            for (int k = 0; k < GEN; k++) {
                assertEquals(logSoftmax(biased.rows().get(k))[forced], biased.tokens().get(k).logprobs().logprob(), 1e-9, "raw, not biased");
                assertNotEquals(forced, biased.tokens().get(k).logprobs().top().getFirst().token());
            }

            // penalties (and a sampled draw): replaying the raw rows through a Sampler gives the same tokens
            SamplingParams penalized = SamplingParams.builder().temperature(0.8f).seed(4242)
                    .presencePenalty(1.5f).frequencyPenalty(0.7f).logitBias(Map.of(greedy[1], -5f)).build();
            Run pr = run(e, request(penalized).build());
            int[] got = pr.result().tokenIds();
            Sampler replay = new Sampler(penalized, f.runner().config().vocabSize());
            replay.acceptPrompt(prompt());
            for (int k = 0; k < GEN; k++) {
                int t = replay.sample(pr.rows().get(k), 0);
                assertEquals(t, got[k], "token " + k);
                replay.accept(t);
            }
            // greedy honours them too: negative penalties reward repeats, which the greedy output has none of
            assertEquals(GEN, java.util.Arrays.stream(greedy).distinct().count(), "the fixture's greedy output repeats nothing");
            Run rewarded = run(e, request(SamplingParams.builder().presencePenalty(-2f).frequencyPenalty(-2f).build()).build());
            assertTrue(java.util.Arrays.stream(rewarded.result().tokenIds()).distinct().count() < GEN,
                    "repeats rewarded: " + java.util.Arrays.toString(rewarded.result().tokenIds()));
        }
    }

    @Test
    void badLogprobsAndBiasAreRefused() {
        var many = assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().logprobs(21));
        assertTrue(many.getMessage().contains("20") && many.getMessage().contains("21"), many.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().logprobs(-1));
        assertEquals(-1, EngineRequest.of("Once", 2).logprobs());
        assertEquals(20, EngineRequest.builder().prompt("x").logprobs(20).build().logprobs());
        try (Engine e = f.engine(BatchInvarianceTest.config())) {
            int vocab = f.runner().config().vocabSize();
            var outside = assertThrows(IllegalArgumentException.class,
                    () -> e.submit(request(SamplingParams.builder().logitBias(Map.of(vocab, 1f)).build()).build()));
            assertTrue(outside.getMessage().contains("token id " + vocab), outside.getMessage());
        }
    }
}
