package io.modelopt.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A bounded soak: 320 requests of random lengths from 8 threads, with random cancellations and
 * deadlines, n up to 3, and a KV pool small enough to force preemption. Every request completes,
 * is cancelled or expires; in the batch-invariant mode every completed greedy sample equals its
 * solo run; no KV block is left referenced and the engine's threads are gone after close.
 */
class EngineSoakTest {
    private static final int THREADS = 8, PER_THREAD = 40, PROMPTS = 12, MAX_GEN = 20;

    private record Outcome(int prompt, int maxTokens, EngineResult result, Throwable error) {}

    @Test
    void hundredsOfRequestsCompleteCancelOrExpireWithoutLeaks() throws Exception {
        try (EngineFixtures f = EngineFixtures.open("stories260K", true)) {
            int vocab = f.runner().config().vocabSize();
            Random pr = new Random(5);
            List<int[]> prompts = new ArrayList<>();
            for (int i = 0; i < PROMPTS; i++) {
                int[] p = new int[1 + pr.nextInt(40)];
                p[0] = 1;
                for (int t = 1; t < p.length; t++) p[t] = 3 + pr.nextInt(vocab - 3);
                prompts.add(p);
            }
            List<int[]> solo = new ArrayList<>();
            try (Engine e = f.engine(BatchInvarianceTest.config())) {
                for (int[] p : prompts) solo.add(e.submit(EngineRequest.builder().promptTokens(p).maxTokens(MAX_GEN).build()).await().tokenIds());
            }
            // 10 blocks of 16, no prefix sharing: 160 slots for up to 8 sequences of up to 60 tokens: preemption
            EngineConfig config = EngineConfig.builder().maxNumSeqs(8).maxBatchedTokens(48).kvBlocks(10).kvBlockSize(16).prefixCaching(false).maxWaiting(32)
                    .metricsLogInterval(Duration.ZERO).build();
            List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
            MetricsSnapshot end;
            Engine engine = f.engine(config);
            try (ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
                List<Future<?>> fs = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    long seed = t;
                    fs.add(pool.submit(() -> {
                        Random r = new Random(seed);
                        for (int i = 0; i < PER_THREAD; i++) {
                            int p = r.nextInt(PROMPTS), max = 1 + r.nextInt(MAX_GEN);
                            int kind = r.nextInt(10);
                            EngineRequest.Builder b = EngineRequest.builder().promptTokens(prompts.get(p)).maxTokens(max).n(kind == 0 ? 2 + r.nextInt(2) : 1);
                            if (kind == 1) b.timeout(Duration.ofMillis(1 + r.nextInt(30)));
                            RequestHandle h;
                            while (true) {
                                try {
                                    h = engine.submit(b.build());
                                    break;
                                } catch (EngineRejectedException full) {
                                    Thread.sleep(2);
                                }
                            }
                            if (kind == 2) {
                                Thread.sleep(r.nextInt(5));
                                h.cancel();
                            }
                            try {
                                outcomes.add(new Outcome(p, max, h.await(), null));
                            } catch (java.util.concurrent.ExecutionException ex) {
                                outcomes.add(new Outcome(p, max, null, ex.getCause()));
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> fu : fs) fu.get();
            } finally {
                engine.close();
                end = engine.metrics();
            }
            assertEquals(THREADS * PER_THREAD, outcomes.size());
            int completed = 0, cancelled = 0, expired = 0, checked = 0;
            for (Outcome o : outcomes) {
                assertEquals(null, o.error(), "no request fails");
                for (Completion c : o.result().completions()) {
                    switch (c.finishReason()) {
                        case CANCELLED -> cancelled++;
                        case EXPIRED -> expired++;
                        default -> {
                            completed++;
                            int[] want = Arrays.copyOf(solo.get(o.prompt()), Math.min(o.maxTokens(), solo.get(o.prompt()).length));
                            assertArrayEquals(want, c.tokenIds(), "completed greedy sample of prompt " + o.prompt() + " equals its solo run");
                            checked++;
                        }
                    }
                    // partial outputs are prefixes of the solo run too
                    int[] got = c.tokenIds(), s = solo.get(o.prompt());
                    assertArrayEquals(Arrays.copyOf(s, Math.min(got.length, s.length)), got, "a partial output is a prefix of the solo run");
                }
            }
            System.out.printf("soak: %d samples completed, %d cancelled, %d expired; %d preemptions, %d rejections, %d steps%n",
                    completed, cancelled, expired, end.preemptions(), end.rejected(), end.steps());
            assertTrue(checked > 100, "most samples completed: " + checked);
            assertTrue(end.preemptions() > 0, "the small pool forced preemption");
            assertTrue(cancelled + expired > 0, "some requests were cancelled or expired");
            assertEquals(0, end.kvBlocksUsed(), "no KV block leaks");
            assertEquals(0, end.running());
            assertTrue(engine.isClosed());
            assertFalse(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("modelopt-engine")), "no engine thread is left");
            assertTrue(engine.deliveryTerminated(), "no delivery thread (virtual) is left");
        }
    }
}
