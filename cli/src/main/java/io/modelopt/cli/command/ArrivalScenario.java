package io.modelopt.cli.command;

import io.modelopt.scheduler.Completion;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import io.modelopt.scheduler.EngineListener;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.RequestHandle;
import io.modelopt.scheduler.TokenEvent;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench --concurrency N --arrivals K}: what long prompts arriving mid-decode do to the
 * sequences already decoding, the case chunked prefill exists for. N requests (P-token prompts, G
 * new tokens) start; once each has its first token, K more with P2-token prompts arrive one every
 * MS ms. Printed: the running requests' inter-token gaps (worst, p99, p50) from the first arrival
 * to their end, and the completion times of both groups (mean, min, max). Without chunked
 * prefill a late prompt runs whole in a step of its own and every running sequence waits for it.
 */
final class ArrivalScenario {
    private ArrivalScenario() {}

    static void run(PrintStream out, Engine engine, Path model, int vocab, int bos, int n, int p, int g, int arrivals, int arrivalPrompt,
                    int intervalMs, EngineConfig config) throws Exception {
        // warm-up through the same paths: a short prompt and a long one
        engine.submit(EngineBench.request(InferenceBench.prompt(p, vocab, bos, 40), 4)).await();
        engine.submit(EngineBench.request(InferenceBench.prompt(arrivalPrompt, vocab, bos, 41), 4)).await();
        CountDownLatch started = new CountDownLatch(n);
        List<RequestHandle> running = new ArrayList<>(), late = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            boolean[] first = {true};
            running.add(engine.submit(EngineBench.request(InferenceBench.prompt(p, vocab, bos, 2000 + i), g), new EngineListener() {
                @Override public void onToken(TokenEvent event) {
                    if (first[0]) {
                        first[0] = false;
                        started.countDown();
                    }
                }
                @Override public void onError(Throwable error) { started.countDown(); }
            }));
        }
        if (!started.await(60, TimeUnit.SECONDS)) throw new IllegalStateException("the running requests produced no first token in 60 s");
        long firstArrival = System.nanoTime() - t0;
        for (int i = 0; i < arrivals; i++) {
            if (i > 0) Thread.sleep(intervalMs);
            late.add(engine.submit(EngineBench.request(InferenceBench.prompt(arrivalPrompt, vocab, bos, 3000 + i), g)));
        }
        List<EngineResult> runningResults = new ArrayList<>(), lateResults = new ArrayList<>();
        for (RequestHandle h : running) runningResults.add(h.await());
        for (RequestHandle h : late) lateResults.add(h.await());
        List<Double> gaps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // token times are from each request's submit; the requests were submitted within microseconds of t0
            Completion c = runningResults.get(i).completions().getFirst();
            long[] t = c.tokenNanos();
            for (int k = 1; k < t.length; k++) if (t[k] >= firstArrival) gaps.add((t[k] - t[k - 1]) / 1e6);
        }
        out.printf(Locale.ROOT, "arrival bench: %s, %d running requests (%d-token prompts, %d new tokens), then %d arrivals of %d-token prompts every %d ms; "
                + "max %d batched tokens, chunked prefill %s%n", model.getFileName(), n, p, g, arrivals, arrivalPrompt, intervalMs, config.maxBatchedTokens(),
                config.chunkedPrefill() ? "on" : "off");
        out.printf(Locale.ROOT, "running requests' inter-token gap after the first arrival: max %.1f ms, p99 %.1f ms, p50 %.1f ms (%d gaps)%n",
                EngineBench.pct(gaps, 100), EngineBench.pct(gaps, 99), EngineBench.pct(gaps, 50), gaps.size());
        printCompletion(out, "running requests", runningResults);
        printCompletion(out, "arriving requests", lateResults);
    }

    private static void printCompletion(PrintStream out, String what, List<EngineResult> results) {
        List<Double> e2e = new ArrayList<>();
        for (EngineResult r : results) e2e.add(r.e2eNanos() / 1e6);
        out.printf(Locale.ROOT, "%s: completion mean %.1f ms (min %.1f, max %.1f)%n", what, EngineBench.mean(e2e), EngineBench.pct(e2e, 0), EngineBench.pct(e2e, 100));
    }
}
