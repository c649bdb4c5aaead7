package io.modelopt.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerMemory;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.generate.FinishReason;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad input and faults: each gets a clear error, never a stuck step loop. */
class EngineFaultTest {
    private static EngineFixtures f;

    @BeforeAll static void open() { f = EngineFixtures.open("stories260K", false); }

    @AfterAll static void close() { f.close(); }

    private static EngineConfig config() { return BatchInvarianceTest.config(); }

    @Test
    void badRequestsAreRefusedWithTheNumbers() {
        assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().build());
        var empty = assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().prompt("").build());
        assertTrue(empty.getMessage().contains("empty"), empty.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().promptTokens(new int[0]).build());
        var neg = assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().prompt("x").maxTokens(-1).build());
        assertTrue(neg.getMessage().contains("-1"), neg.getMessage());
        assertThrows(IllegalArgumentException.class, () -> EngineRequest.builder().prompt("x").n(0).build());
        assertThrows(NullPointerException.class, () -> EngineRequest.builder().prompt(null));
        try (Engine e = f.engine(config())) {
            int ctx = e.contextLength();
            var tooLong = assertThrows(IllegalArgumentException.class, () -> e.submit(EngineRequest.builder().promptTokens(new int[ctx - 4]).maxTokens(10).build()));
            assertTrue(tooLong.getMessage().contains(String.valueOf(ctx)) && tooLong.getMessage().contains("10"), tooLong.getMessage());
            var vocab = assertThrows(IllegalArgumentException.class, () -> e.submit(EngineRequest.builder().promptTokens(new int[] {1, 1 << 20}).maxTokens(4).build()));
            assertTrue(vocab.getMessage().contains("vocabulary"), vocab.getMessage());
            var many = assertThrows(IllegalArgumentException.class, () -> e.submit(EngineRequest.builder().prompt("a").maxTokens(4).n(9).build()));
            assertTrue(many.getMessage().contains("maxNumSeqs"), many.getMessage());
        }
    }

    /**
     * Without chunked prefill, a prompt over the step budget runs alone in a step ahead of the
     * decodes; it must not wait for the running requests to end (it did: such a step never came
     * while anything decoded). Counted in steps, not time: the long request's first token comes
     * while the running ones still have most of their tokens to make.
     */
    @Test
    void aLongPromptWithoutChunkedPrefillDoesNotStarveBehindDecodes() throws Exception {
        EngineConfig c = EngineConfig.builder().maxNumSeqs(4).maxBatchedTokens(16).chunkedPrefill(false).kvBlocks(64).kvBlockSize(16)
                .metricsLogInterval(java.time.Duration.ZERO).build();
        try (Engine e = f.engine(c)) {
            int[] counts = new int[2];
            CountDownLatch running = new CountDownLatch(2);
            List<RequestHandle> decoding = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                int k = i;
                decoding.add(e.submit(EngineRequest.builder().promptTokens(new int[] {1, 400 + i}).maxTokens(120).ignoreEos(true).build(), new EngineListener() {
                    @Override public void onToken(TokenEvent event) {
                        synchronized (counts) {
                            if (counts[k]++ == 0) running.countDown();
                        }
                    }
                }));
            }
            assertTrue(running.await(30, java.util.concurrent.TimeUnit.SECONDS));
            int[] longPrompt = new int[60];
            for (int i = 0; i < longPrompt.length; i++) longPrompt[i] = 1 + (i * 37) % 400;
            int[] seenAtFirstToken = new int[1];
            CountDownLatch first = new CountDownLatch(1);
            RequestHandle lng = e.submit(EngineRequest.builder().promptTokens(longPrompt).maxTokens(4).ignoreEos(true).build(), new EngineListener() {
                @Override public void onToken(TokenEvent event) {
                    if (first.getCount() == 1) {
                        synchronized (counts) { seenAtFirstToken[0] = Math.max(counts[0], counts[1]); }
                        first.countDown();
                    }
                }
            });
            assertEquals(4, lng.await().completionTokens());
            for (RequestHandle h : decoding) assertEquals(120, h.await().completionTokens());
            assertTrue(seenAtFirstToken[0] < 60, "the 60-token prompt (budget 16) got its first token only after the running requests made "
                    + seenAtFirstToken[0] + " of their 120 tokens");
        }
    }

    @Test
    void submitAfterCloseFails() {
        Engine e = f.engine(config());
        e.close();
        var ex = assertThrows(IllegalStateException.class, () -> e.submit(EngineRequest.of("Once", 4)));
        assertTrue(ex.getMessage().contains("closed"), ex.getMessage());
        e.close(); // idempotent
    }

    @Test
    void aThrowingListenerDoesNotStopTheOthers() throws Exception {
        try (Engine e = f.engine(config())) {
            RequestHandle bad = e.submit(EngineRequest.of("Once upon", 8), new EngineListener() {
                @Override public void onToken(TokenEvent event) { throw new IllegalStateException("listener bug"); }
            });
            List<TokenEvent> seen = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            RequestHandle good = e.submit(EngineRequest.of("Once upon a", 8), new EngineListener() {
                @Override public void onToken(TokenEvent event) { seen.add(event); }

                @Override public void onComplete(EngineResult result) { done.countDown(); }
            });
            assertEquals(8, bad.await().completionTokens(), "the request of a throwing listener still completes");
            EngineResult r = good.await();
            done.await();
            assertEquals(r.completionTokens() + 1, seen.size(), "every token and the finish event");
            StringBuilder text = new StringBuilder();
            seen.forEach(t -> text.append(t.text()));
            assertEquals(r.text(), text.toString());
        }
    }

    /** A token listener of {@code generate} (the single-request form) that throws reaches its caller, and does not hang it. */
    @Test
    void aThrowingGenerateListenerReachesItsCaller() {
        try (Engine e = f.engine(config())) {
            var options = io.modelopt.core.generate.GenerationOptions.builder().maxTokens(50).build();
            var ex = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(IllegalStateException.class,
                    () -> e.generate("Once upon", options, new io.modelopt.core.generate.TokenListener() {
                        int seen;

                        @Override public void onToken(int tokenId, String text) {
                            if (++seen == 2) throw new IllegalStateException("listener bug");
                        }

                        @Override public void onFinish(String text, FinishReason reason) {}
                    })));
            assertEquals("listener bug", ex.getMessage());
            var npe = assertThrows(NullPointerException.class, () -> e.generate(null, options, null));
            assertTrue(npe.getMessage().contains("prompt"), npe.getMessage());
            assertEquals(4, e.generate("Once", options.withMaxTokens(4), null).tokenIds().length, "the engine goes on serving");
        }
    }

    /**
     * An exception after the forward (here the logits observer; a row with no finite logit fails the
     * same way in the sampler) fails the request it was for, with its cause; the others in that
     * step go on, and so does the engine.
     */
    @Test
    void aFailureAfterTheForwardFailsOnlyItsRequest() throws Exception {
        try (Engine e = f.engine(config())) {
            java.util.concurrent.atomic.AtomicLong victim = new java.util.concurrent.atomic.AtomicLong(-1);
            e.observeLogits((id, s, p, b, o, v) -> {
                if (id == victim.get() && p > 3) throw new IllegalStateException("observer bug");
            });
            RequestHandle good = e.submit(EngineRequest.builder().prompt("Once upon a").maxTokens(12).ignoreEos(true).build());
            RequestHandle bad = e.submit(EngineRequest.builder().prompt("Once upon").maxTokens(12).ignoreEos(true).build());
            victim.set(bad.id());
            var ex = assertThrows(ExecutionException.class, bad::await);
            assertEquals("observer bug", ex.getCause().getMessage());
            assertEquals(12, good.await().completionTokens(), "the other request of those steps completes");
            assertEquals(1, e.metrics().failed());
            assertEquals(3, e.submit(EngineRequest.of("Once", 3)).await().completionTokens(), "the engine goes on serving");
        }
    }

    /** {@code close()} past its grace ends an {@code n} > 1 request whose prompt has not run: every sample, started or not, is CANCELLED. */
    @Test
    void closeCancelsUnstartedSamplesAsCancelled() throws Exception {
        CountDownLatch release = new CountDownLatch(1), entered = new CountDownLatch(1);
        Engine e = f.engine(config().toBuilder().maxNumSeqs(2).closeGrace(Duration.ZERO).build());
        holdInFirstStep(e, entered, release);
        RequestHandle running = e.submit(EngineRequest.builder().prompt("Once").maxTokens(50).ignoreEos(true).build());
        entered.await(); // the loop is held inside its first step
        RequestHandle waiting = e.submit(EngineRequest.builder().prompt("upon a time").maxTokens(4).n(2).build());
        Thread closer = Thread.ofPlatform().start(e::close);
        while (!e.isClosing()) Thread.sleep(1);
        release.countDown();
        closer.join();
        EngineResult r = waiting.await();
        assertEquals(2, r.completions().size());
        for (Completion c : r.completions()) assertEquals(FinishReason.CANCELLED, c.finishReason(), "sample " + c.index());
        assertEquals(FinishReason.CANCELLED, running.await().finishReason());
    }

    @Test
    void aLateSubscriberGetsEveryEventAndDemandIsHonoured() throws Exception {
        try (Engine e = f.engine(config())) {
            RequestHandle h = e.submit(EngineRequest.of("Once upon", 6));
            EngineResult r = h.await();
            List<TokenEvent> got = new ArrayList<>();
            CountDownLatch complete = new CountDownLatch(1);
            Flow.Subscription[] sub = new Flow.Subscription[1];
            h.subscribe(new Flow.Subscriber<>() {
                @Override public void onSubscribe(Flow.Subscription s) { sub[0] = s; s.request(2); }
                @Override public void onNext(TokenEvent item) { got.add(item); }
                @Override public void onError(Throwable t) {}
                @Override public void onComplete() { complete.countDown(); }
            });
            Thread.sleep(50);
            assertEquals(2, got.size(), "demand of 2 delivers 2");
            sub[0].request(100);
            complete.await();
            assertEquals(r.completionTokens() + 1, got.size());
            assertEquals(FinishReason.MAX_TOKENS, got.getLast().finishReason());
        }
    }

    @Test
    void anInterruptedCallerGetsInterruptedExceptionAndTheRequestIsCancelled() throws Exception {
        try (Engine e = f.engine(config())) {
            RequestHandle h = e.submit(EngineRequest.of("Once upon a time", 100));
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, h::await);
            EngineResult r = h.result().get();
            assertTrue(r.finishReason() == FinishReason.CANCELLED || r.finishReason() == FinishReason.MAX_TOKENS, r.finishReason().toString());
        }
    }

    @Test
    void aFullQueueRejectsAtOnceAndDeadlinesExpireWaitingRequests() throws Exception {
        CountDownLatch release = new CountDownLatch(1), entered = new CountDownLatch(1);
        try (Engine e = f.engine(config().toBuilder().maxWaiting(2).maxNumSeqs(1).build())) {
            holdInFirstStep(e, entered, release);
            RequestHandle running = e.submit(EngineRequest.of("Once", 3));
            entered.await(); // the loop is held inside its first step
            RequestHandle w1 = e.submit(EngineRequest.builder().prompt("upon").maxTokens(3).timeout(Duration.ofMillis(20)).build());
            e.submit(EngineRequest.of("a", 3));
            var full = assertThrows(EngineRejectedException.class, () -> e.submit(EngineRequest.of("time", 3)));
            assertTrue(full.getMessage().contains("2"), full.getMessage());
            Thread.sleep(40);
            release.countDown();
            EngineResult expired = w1.await();
            assertEquals(FinishReason.EXPIRED, expired.finishReason());
            assertEquals(0, expired.completionTokens());
            assertEquals(3, running.await().completionTokens());
            assertEquals(1, e.metrics().rejected());
        }
    }

    @Test
    void aFailingStepFailsItsRequestsAndABrokenModelShutsTheEngineDown() throws Exception {
        AtomicInteger failures = new AtomicInteger(1);
        try (Engine e = Engine.start(new Faulty(f.runner(), failures), f.source().tokenizer(), config())) {
            RequestHandle first = e.submit(EngineRequest.of("Once", 4));
            var ex = assertThrows(ExecutionException.class, first::await);
            assertInstanceOf(IllegalStateException.class, ex.getCause());
            assertEquals("injected step failure", ex.getCause().getMessage());
            assertEquals(4, e.submit(EngineRequest.of("Once", 4)).await().completionTokens(), "the engine goes on serving");
            failures.set(Integer.MAX_VALUE);
            for (int i = 0; i < 3; i++) assertThrows(ExecutionException.class, e.submit(EngineRequest.of("Once", 4))::await);
            while (!e.isClosed()) Thread.sleep(1);
            var closed = assertThrows(IllegalStateException.class, () -> e.submit(EngineRequest.of("Once", 4)));
            assertTrue(closed.getMessage().contains("model failed"), closed.getMessage());
        }
    }

    /** Holds the step loop inside its first step (counting {@code entered} down) until {@code release}. */
    private static void holdInFirstStep(Engine e, CountDownLatch entered, CountDownLatch release) {
        e.observeLogits((id, s, p, b, o, v) -> {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Delegates to a real runner, throwing from the block forward while {@code failures} > 0. */
    private record Faulty(ModelRunner delegate, AtomicInteger failures) implements ModelRunner {
        @Override public ModelConfig config() { return delegate.config(); }
        @Override public RunnerOptions options() { return delegate.options(); }
        @Override public int contextLength() { return delegate.contextLength(); }
        @Override public KvCache newKvCache(int s, int p) { return delegate.newKvCache(s, p); }
        @Override public Logits forward(Batch batch, KvCache cache) { return delegate.forward(batch, cache); }
        @Override public KvStorage newKvStorage(int n, int b) { return delegate.newKvStorage(n, b); }
        @Override public Logits forward(Batch batch, KvStorage kv) {
            if (failures.getAndDecrement() > 0) throw new IllegalStateException("injected step failure");
            return delegate.forward(batch, kv);
        }
        @Override public RunnerMemory memory() { return delegate.memory(); }
        @Override public void close() {}
    }
}
