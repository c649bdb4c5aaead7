package io.modelopt.scheduler;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A submitted request: a {@link Flow.Publisher} of its {@link TokenEvent}s, the {@link #result()}
 * future, and {@link #cancel()}. The publisher replays: a subscriber that arrives late gets every
 * event from the first, so subscribing after {@code submit} returns loses nothing. Events are
 * delivered on the engine's delivery threads (virtual), never on the step loop, so a slow
 * subscriber slows only itself. A subscriber whose {@code onNext} throws is cancelled and logged.
 *
 * <p>Cancelled and expired requests complete their result normally, with
 * {@link io.modelopt.core.generate.FinishReason#CANCELLED} or {@code EXPIRED} and what was produced
 * so far; a failure inside a step completes it exceptionally with the cause.
 */
public final class RequestHandle implements Flow.Publisher<TokenEvent> {
    private static final Logger log = LoggerFactory.getLogger(RequestHandle.class);

    private final long id;
    private final Executor delivery;
    private final CompletableFuture<EngineResult> result = new CompletableFuture<>();
    private final List<TokenEvent> events = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();
    private volatile boolean cancelRequested;
    private boolean done;
    private Throwable error;

    RequestHandle(long id, Executor delivery) {
        this.id = id;
        this.delivery = delivery;
    }

    /** The engine's id of this request (increasing in submit order). */
    public long id() { return id; }

    /** Completes when the request ends; see the class comment. */
    public CompletableFuture<EngineResult> result() { return result; }

    /**
     * Waits for the result. If the caller is interrupted, the request is cancelled (the caller gave
     * up on it) and the interrupt is rethrown.
     *
     * @throws ExecutionException with the cause of a failed request
     */
    public EngineResult await() throws InterruptedException, ExecutionException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            cancel();
            throw e;
        }
    }

    /** Asks the engine to end the request (at its next step); a no-op once it has ended. */
    public void cancel() { cancelRequested = true; }

    boolean cancelRequested() { return cancelRequested; }

    public boolean isDone() { return result.isDone(); }

    @Override public void subscribe(Flow.Subscriber<? super TokenEvent> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        Subscription s = new Subscription(subscriber);
        synchronized (this) {
            subscriptions.add(s);
        }
        try {
            subscriber.onSubscribe(s);
        } catch (Throwable t) {
            s.cancel();
            log.warn("request {}: a subscriber's onSubscribe threw; it is detached", id, t);
            return;
        }
        s.signal();
    }

    // ---- engine side ----

    void emit(TokenEvent e) {
        List<Subscription> subs;
        synchronized (this) {
            events.add(e);
            subs = List.copyOf(subscriptions);
        }
        for (Subscription s : subs) s.signal();
    }

    void complete(EngineResult r) {
        result.complete(r);
        finish(null);
    }

    void fail(Throwable t) {
        result.completeExceptionally(t);
        finish(t);
    }

    private void finish(Throwable t) {
        List<Subscription> subs;
        synchronized (this) {
            if (done) return;
            done = true;
            error = t;
            subs = List.copyOf(subscriptions);
        }
        for (Subscription s : subs) s.signal();
    }

    /** One subscriber's demand and read position; drained by one delivery task at a time. */
    private final class Subscription implements Flow.Subscription {
        private final Flow.Subscriber<? super TokenEvent> subscriber;
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private volatile boolean cancelled;
        private int next;
        private boolean terminated;
        private Throwable badRequest;

        Subscription(Flow.Subscriber<? super TokenEvent> subscriber) { this.subscriber = subscriber; }

        @Override public void request(long n) {
            if (n <= 0) badRequest = new IllegalArgumentException("Flow.Subscription.request(" + n + "): demand must be positive (rule 3.9)");
            else demand.getAndAccumulate(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
            signal();
        }

        @Override public void cancel() { cancelled = true; }

        void signal() {
            if (wip.getAndIncrement() != 0) return;
            try {
                delivery.execute(this::drain);
            } catch (RejectedExecutionException closed) {
                drain(); // the engine is gone: deliver what remains on the caller's thread
            }
        }

        private void drain() {
            int missed = 1;
            while (true) {
                try {
                    deliver();
                } catch (Throwable t) {
                    cancelled = true;
                    log.warn("request {}: a subscriber threw; it is detached, the request goes on", id, t);
                }
                missed = wip.addAndGet(-missed);
                if (missed == 0) return;
            }
        }

        private void deliver() {
            while (!cancelled && !terminated) {
                if (badRequest != null) {
                    terminated = true;
                    subscriber.onError(badRequest);
                    return;
                }
                TokenEvent e = null;
                boolean end;
                Throwable err;
                synchronized (RequestHandle.this) {
                    if (next < events.size() && demand.get() > 0) e = events.get(next++);
                    end = done && next == events.size();
                    err = error;
                }
                if (e != null) {
                    if (demand.get() != Long.MAX_VALUE) demand.decrementAndGet();
                    subscriber.onNext(e);
                    continue;
                }
                if (end) {
                    terminated = true;
                    if (err != null) subscriber.onError(err);
                    else subscriber.onComplete();
                }
                return;
            }
        }
    }

    /** A subscriber that forwards to a listener, with unbounded demand. */
    static Flow.Subscriber<TokenEvent> listenerSubscriber(RequestHandle handle, EngineListener listener) {
        return new Flow.Subscriber<>() {
            @Override public void onSubscribe(Flow.Subscription s) { s.request(Long.MAX_VALUE); }

            @Override public void onNext(TokenEvent item) { listener.onToken(item); }

            @Override public void onError(Throwable t) { listener.onError(t); }

            @Override public void onComplete() {
                try {
                    listener.onComplete(handle.result.join());
                } catch (CancellationException ignored) {
                    // not reached: results are never cancelled, only completed
                }
            }
        };
    }
}
