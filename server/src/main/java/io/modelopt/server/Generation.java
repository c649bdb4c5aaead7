package io.modelopt.server;

import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineRejectedException;
import io.modelopt.scheduler.EngineRequest;
import io.modelopt.scheduler.EngineResult;
import io.modelopt.scheduler.RequestHandle;
import io.modelopt.scheduler.TokenEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The engine requests of one HTTP request (one per prompt, each with {@code n} samples), their
 * events merged into one queue in arrival order, so that one thread can stream every choice.
 * Choice {@code p * n + s} is sample {@code s} of prompt {@code p}, as OpenAI numbers them.
 */
final class Generation {
    /** One streamed token (or finish event) of choice {@code choice}. */
    record Token(int choice, TokenEvent event) implements Item {}

    /** Prompt {@code prompt}'s request ended. */
    record Ended(int prompt, EngineResult result, Throwable error) implements Item {}

    sealed interface Item permits Token, Ended {}

    private final List<RequestHandle> handles = new ArrayList<>();
    private final LinkedBlockingQueue<Item> items = new LinkedBlockingQueue<>();
    private final int n;
    private int ended;

    private Generation(int n) { this.n = n; }

    /**
     * Submits one request per prompt. If any is refused, the ones already queued are cancelled.
     *
     * @throws ApiException 429 when the engine's queue is full, 503 when it is closed, 400 when it refuses a prompt
     */
    static Generation submit(Engine engine, List<EngineRequest> requests, int n) {
        Generation g = new Generation(n);
        try {
            for (int p = 0; p < requests.size(); p++) {
                RequestHandle h = engine.submit(requests.get(p));
                g.handles.add(h);
                g.subscribe(p, h);
            }
        } catch (EngineRejectedException e) {
            g.cancel();
            throw ApiException.queueFull(e.getMessage());
        } catch (IllegalStateException e) {
            g.cancel();
            throw ApiException.unavailable(e.getMessage());
        } catch (IllegalArgumentException e) {
            g.cancel();
            throw ApiException.badRequest(null, e.getMessage());
        }
        return g;
    }

    private void subscribe(int prompt, RequestHandle h) {
        int base = prompt * n;
        h.subscribe(new Flow.Subscriber<>() {
            @Override public void onSubscribe(Flow.Subscription s) { s.request(Long.MAX_VALUE); }

            @Override public void onNext(TokenEvent e) { items.add(new Token(base + e.sample(), e)); }

            @Override public void onError(Throwable t) { items.add(new Ended(prompt, null, t)); }

            @Override public void onComplete() { items.add(new Ended(prompt, h.result().join(), null)); }
        });
    }

    int prompts() { return handles.size(); }

    int choices() { return handles.size() * n; }

    /** The next event, waiting at most {@code nanos}; null on time-out or when every request has ended. */
    Item next(long nanos) throws InterruptedException {
        if (ended == handles.size() && items.isEmpty()) return null;
        Item i = items.poll(nanos, TimeUnit.NANOSECONDS);
        if (i instanceof Ended) ended++;
        return i;
    }

    boolean finished() { return ended == handles.size() && items.isEmpty(); }

    /** Asks the engine to end every request (it frees their KV blocks at its next step). */
    void cancel() { for (RequestHandle h : handles) h.cancel(); }

    /** Waits for every result (in prompt order). */
    List<EngineResult> results() throws InterruptedException {
        List<EngineResult> out = new ArrayList<>();
        for (RequestHandle h : handles) {
            try {
                out.add(h.await());
            } catch (ExecutionException e) {
                throw ApiException.internal("generation failed: " + e.getCause());
            }
        }
        return out;
    }

    /** Waits for every request to end (the engine has released their blocks) within {@code millis}. */
    void awaitEnd(long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (RequestHandle h : handles) {
            try {
                h.result().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception ignored) {
                return; // timed out, failed or interrupted: nothing more to wait for here
            }
        }
    }
}
