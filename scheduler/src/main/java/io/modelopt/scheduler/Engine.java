package io.modelopt.scheduler;

import io.modelopt.core.OptimizedModel;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.generate.FinishReason;
import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.SequenceState;
import io.modelopt.core.generate.TokenListener;
import io.modelopt.core.sampling.Logprobs;
import io.modelopt.core.sampling.Sampler;
import io.modelopt.core.sampling.TokenLogprobs;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.kvcache.BlockManager;
import io.modelopt.kvcache.KvBlockPool;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The continuous-batching engine: many callers share one model. {@link #submit} from any thread
 * queues a request; one step-loop thread runs the {@link Scheduler}'s plan as one
 * {@code forward(Batch, KvStorage)} per step over all scheduled tokens (prefill chunks and decodes
 * mixed), samples each sequence's next token with its own {@link SequenceState}, and streams it to
 * the request's {@link RequestHandle}. The KV cache is a paged {@link KvBlockPool} owned here.
 *
 * <p>Lifecycle: {@link #close()} stops admitting, lets what runs finish within
 * {@link EngineConfig#closeGrace()}, cancels the rest, then releases the KV pool (and the model,
 * when the engine owns it) and ends its threads.
 *
 * <p>Faults: an exception inside a step fails the requests of that step with it as the cause and
 * the engine goes on; three failing steps in a row mean the model is broken, and the engine fails
 * everything and shuts down.
 */
public final class Engine implements io.modelopt.core.spi.ServingEngine {
    private static final Logger log = LoggerFactory.getLogger(Engine.class);
    private static final Object WAKE = new Object();
    private static final int BROKEN_AFTER_FAILED_STEPS = 3;

    private final ModelRunner runner;
    private final Tokenizer tokenizer;
    private final AutoCloseable owned;
    private final EngineConfig config;
    private final KvBlockPool pool;
    private final BlockManager blocks;
    private final Scheduler scheduler;
    private final int[] eosIds;
    private final int vocabSize, contextLength;
    private final EngineMetrics metrics = new EngineMetrics();
    private final ExecutorService delivery = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("modelopt-engine-delivery-", 0).factory());
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong ids = new AtomicLong();
    private final Object lifecycle = new Object();
    private final Thread loop;
    private final List<RequestState> active = new ArrayList<>();
    private volatile LogitsObserver logitsObserver;
    private volatile boolean closing;
    private volatile long graceDeadline;
    private boolean stopped;
    private volatile Throwable brokenBy;
    private int failedStepsInARow;
    private long lastLogNanos = System.nanoTime();
    /** The snapshot the last periodic log line showed (its rates are since this one), or null before the first. */
    private MetricsSnapshot lastLogged;

    private Engine(ModelRunner runner, Tokenizer tokenizer, KvBlockPool pool, EngineConfig config, AutoCloseable owned) {
        this.runner = runner;
        this.tokenizer = tokenizer;
        this.owned = owned;
        this.config = config;
        this.pool = pool;
        this.blocks = pool.blocks();
        this.vocabSize = runner.config().vocabSize();
        this.contextLength = runner.contextLength();
        this.eosIds = io.modelopt.core.generate.Generator.eosIds(runner.config().eosTokenIds(), tokenizer.eosId());
        this.scheduler = new Scheduler(blocks, config, runner.options().maxBatchTokens());
        this.loop = Thread.ofPlatform().name("modelopt-engine-step-loop").daemon(false).unstarted(this::run);
        loop.start();
        log.info("engine: {} KV blocks x {} tokens ({}), maxNumSeqs {}, maxBatchedTokens {}, chunked prefill {}, prefix caching {}{}",
                blocks.numBlocks(), blocks.blockSize(), blocks.kvDtype(), config.maxNumSeqs(), config.maxBatchedTokens(), config.chunkedPrefill(),
                config.prefixCaching(), runner.options().batchInvariant() ? ", batch-invariant" : "");
    }

    /**
     * An engine on {@code runner} (not closed by the engine). The runner must allow
     * {@code maxBatchedTokens} tokens and {@code maxNumSeqs} logits rows per batch and have block KV storage.
     *
     * @throws IllegalArgumentException naming the limit the runner's options miss
     */
    public static Engine start(ModelRunner runner, Tokenizer tokenizer, EngineConfig config) {
        return start(runner, tokenizer, config, null);
    }

    /** An engine on {@code model}'s runner, with the model's KV budget plan when it has one and {@code config.kvBlocks()} is 0. The model stays the caller's. */
    public static Engine start(OptimizedModel model, EngineConfig config) {
        Objects.requireNonNull(model, "model");
        EngineConfig c = config;
        if (c.kvBlocks() == 0 && model.kvPlan().isPresent()) {
            var plan = model.kvPlan().get();
            c = c.toBuilder().kvBlocks(plan.numBlocks()).kvBlockSize(plan.blockSize()).build();
        }
        return start(model.runner(), model.tokenizer(), c, null);
    }

    /** As {@link #start(ModelRunner, Tokenizer, EngineConfig)}, closing {@code owned} (the model) after the KV pool on {@link #close()}. */
    public static Engine start(ModelRunner runner, Tokenizer tokenizer, EngineConfig config, AutoCloseable owned) {
        Objects.requireNonNull(runner, "runner");
        Objects.requireNonNull(tokenizer, "tokenizer");
        Objects.requireNonNull(config, "config");
        var o = runner.options();
        if (o.maxBatchTokens() < config.maxBatchedTokens()) {
            throw new IllegalArgumentException("the runner takes at most " + o.maxBatchTokens() + " tokens per batch (RunnerOptions.maxBatchTokens) but the engine schedules up to "
                    + config.maxBatchedTokens() + " (EngineConfig.maxBatchedTokens): lower the one or raise the other");
        }
        if (o.maxLogitsRows() < config.maxNumSeqs()) {
            throw new IllegalArgumentException("the runner returns at most " + o.maxLogitsRows() + " logits rows per batch (RunnerOptions.maxLogitsRows) but the engine runs up to "
                    + config.maxNumSeqs() + " sequences per step (EngineConfig.maxNumSeqs)");
        }
        BlockManager.checkBlockSize(config.kvBlockSize());
        int numBlocks = config.kvBlocks() > 0 ? config.kvBlocks()
                : (int) Math.min(Integer.MAX_VALUE, (long) config.maxNumSeqs() * ((runner.contextLength() + config.kvBlockSize() - 1) / config.kvBlockSize()));
        KvBlockPool pool = KvBlockPool.of(runner, numBlocks, config.kvBlockSize(), config.prefixCaching());
        return new Engine(runner, tokenizer, pool, config, owned);
    }

    public EngineConfig config() { return config; }

    /** Positions a sequence may use (prompt plus generated tokens). */
    public int contextLength() { return contextLength; }

    public Tokenizer tokenizer() { return tokenizer; }

    /** Sets the observer of every sampled logits row (null removes it). */
    public void observeLogits(LogitsObserver observer) { this.logitsObserver = observer; }

    /** The metrics now. */
    public MetricsSnapshot metrics() { return MetricsSnapshot.of(metrics); }

    /**
     * Queues {@code request}; tokens stream to the returned handle's subscribers.
     *
     * @throws EngineRejectedException the waiting queue is full (retry later)
     * @throws IllegalStateException   the engine is closed or closing
     * @throws IllegalArgumentException the prompt's tokens are outside the vocabulary, prompt plus max
     *         tokens exceed the context length or the KV pool, {@code n} exceeds {@code maxNumSeqs}, or a
     *         logit bias names a token id outside the vocabulary
     */
    public RequestHandle submit(EngineRequest request) {
        Objects.requireNonNull(request, "request");
        int[] prompt = request.promptTokens() != null ? request.promptTokens() : tokenizer.encode(request.prompt(), true, true);
        if (prompt.length == 0) throw new IllegalArgumentException("the prompt has no tokens (an empty text and a tokenizer that adds no BOS)");
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] >= vocabSize) throw new IllegalArgumentException("prompt token " + i + " is " + prompt[i] + ", outside the vocabulary of " + vocabSize);
        }
        Sampler.checkLogitBias(request.options().sampling(), vocabSize);
        int maxTokens = request.options().maxTokens();
        long total = (long) prompt.length + maxTokens;
        if (total > contextLength) {
            throw new IllegalArgumentException("prompt (" + prompt.length + " tokens) plus max tokens (" + maxTokens + ") = " + total
                    + " exceeds the context length of " + contextLength + " tokens");
        }
        if (blocks.blocksFor((int) total) > blocks.numBlocks()) {
            throw new IllegalArgumentException("prompt (" + prompt.length + " tokens) plus max tokens (" + maxTokens + ") needs " + blocks.blocksFor((int) total)
                    + " KV blocks of " + blocks.blockSize() + " tokens but the pool has " + blocks.numBlocks() + " (raise the KV budget)");
        }
        if (request.n() > config.maxNumSeqs()) {
            throw new IllegalArgumentException("n = " + request.n() + " parallel samples exceed maxNumSeqs = " + config.maxNumSeqs());
        }
        synchronized (lifecycle) {
            if (closing || stopped) {
                throw new IllegalStateException(brokenBy != null ? "the engine stopped: the model failed (" + brokenBy + ")" : "the engine is closed; submit before close()");
            }
            int q;
            do {
                q = queued.get();
                if (q >= config.maxWaiting()) {
                    metrics.rejected.increment();
                    throw new EngineRejectedException(config.maxWaiting());
                }
            } while (!queued.compareAndSet(q, q + 1));
            RequestHandle handle = new RequestHandle(ids.getAndIncrement(), delivery);
            metrics.submitted.increment();
            inbox.add(new RequestState(handle, request, prompt, System.nanoTime()));
            return handle;
        }
    }

    /** {@link #submit(EngineRequest)} with a listener attached before any token can flow. */
    public RequestHandle submit(EngineRequest request, EngineListener listener) {
        Objects.requireNonNull(listener, "listener");
        RequestHandle h = submit(request);
        h.subscribe(RequestHandle.listenerSubscriber(h, listener));
        return h;
    }

    /** Submits and waits: the engine's form of {@code Generator.generate} (greedy or sampled, one sample). */
    public EngineResult generate(EngineRequest request) throws InterruptedException {
        try {
            return submit(request).await();
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    /**
     * {@link io.modelopt.core.spi.ServingEngine}'s form: one sample of {@code prompt}, its tokens
     * streamed to {@code listener} (on a delivery thread), the result as {@code Generator} gives it.
     * An interrupted caller cancels the request and gets an {@link IllegalStateException} with the interrupt kept.
     */
    @Override public io.modelopt.core.generate.GenerationResult generate(String prompt, GenerationOptions options, TokenListener listener) {
        TokenListener l = listener == null ? TokenListener.NONE : listener;
        java.util.Objects.requireNonNull(prompt, "prompt is null");
        int[] promptIds = tokenizer.encode(prompt, true, true);
        // as Generator: a budget past the context ends as CONTEXT_FULL where submit() would refuse it
        int room = contextLength - promptIds.length;
        if (room <= 0) throw new IllegalArgumentException("the prompt has " + promptIds.length + " tokens but the context length is " + contextLength);
        boolean clamped = options.maxTokens() > room;
        GenerationOptions o = clamped ? options.withMaxTokens(room) : options;
        java.util.function.Function<FinishReason, FinishReason> reason = f -> clamped && f == FinishReason.MAX_TOKENS ? FinishReason.CONTEXT_FULL : f;
        java.util.concurrent.CountDownLatch delivered = new java.util.concurrent.CountDownLatch(1);
        // The caller's listener throwing ends the request and reaches the caller, as Generator passes it on;
        // the handle would otherwise detach the listener and the caller would wait for a completion never delivered.
        java.util.concurrent.atomic.AtomicReference<RuntimeException> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<RequestHandle> self = new java.util.concurrent.atomic.AtomicReference<>();
        RequestHandle h = submit(EngineRequest.builder().promptTokens(promptIds).options(o).build(), new EngineListener() {
            @Override public void onToken(TokenEvent e) {
                if (thrown.get() != null) return;
                try {
                    if (e.isFinish()) l.onFinish(e.text(), reason.apply(e.finishReason()));
                    else l.onToken(e.tokenId(), e.text());
                } catch (RuntimeException | Error x) {
                    thrown.set(x instanceof RuntimeException re ? re : new IllegalStateException("the token listener failed", x));
                    RequestHandle me = self.get();
                    if (me != null) me.cancel();
                    delivered.countDown();
                }
            }

            @Override public void onComplete(EngineResult result) { delivered.countDown(); }

            @Override public void onError(Throwable error) { delivered.countDown(); }
        });
        self.set(h);
        EngineResult r;
        try {
            if (thrown.get() != null) h.cancel(); // it threw before the handle was known
            r = h.await();
            delivered.await(); // the listener has seen every token before this returns, as with Generator
            if (thrown.get() != null) throw thrown.get();
        } catch (InterruptedException e) {
            h.cancel();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the engine; the request was cancelled", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        }
        Completion c = r.completions().getFirst();
        long[] t = c.tokenNanos();
        long[] decode = new long[Math.max(0, t.length - 1)];
        for (int i = 1; i < t.length; i++) decode[i - 1] = t[i] - t[i - 1];
        var timings = new io.modelopt.core.generate.GenerationTimings(r.promptTokens(), 0, Math.max(0, r.ttftNanos() - r.queueNanos()), Math.max(0, r.ttftNanos()), decode);
        return new io.modelopt.core.generate.GenerationResult(promptIds, c.tokenIds(), c.text(), reason.apply(c.finishReason()), timings);
    }

    /** Blocks in use and free in the KV pool, counted on the step loop's last step. */
    public int kvBlocksUsed() { return metrics.kvBlocksUsed; }

    /** Blocks of the KV pool in all, fixed at start (unlike the gauges, known before the first step). */
    public int kvPoolBlocks() { return blocks.numBlocks(); }

    public boolean isClosed() { return stopped; }

    /** Whether every delivery thread (virtual, so not in {@code Thread.getAllStackTraces}) has ended: after close. */
    boolean deliveryTerminated() { return delivery.isTerminated(); }

    /** Whether {@link #close()} has begun (tests wait for it). */
    boolean isClosing() { return closing; }

    /**
     * Stops admitting, lets running and waiting requests finish within the grace period, cancels
     * the rest, releases the KV pool (and an owned model) and joins the step loop. Idempotent.
     */
    @Override public void close() {
        synchronized (lifecycle) {
            if (!closing) {
                graceDeadline = System.nanoTime() + config.closeGrace().toNanos();
                closing = true;
            }
        }
        inbox.add(WAKE);
        if (Thread.currentThread() == loop) return;
        boolean interrupted = false;
        while (loop.isAlive()) {
            try {
                loop.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    // ---- the step loop ----

    private void run() {
        try {
            while (true) {
                intake();
                long now = System.nanoTime();
                endCancelledAndExpired(now);
                updateGauges();
                if (closing && active.isEmpty()) break;
                if (closing && now - graceDeadline >= 0) {
                    for (RequestState r : List.copyOf(active)) end(r, FinishReason.CANCELLED, now);
                    break;
                }
                if (brokenBy != null) break;
                if (scheduler.running.isEmpty() && scheduler.waiting.isEmpty()) {
                    idle(now);
                    continue;
                }
                step();
                updateGauges();
                maybeLog();
            }
        } catch (Throwable t) {
            log.error("engine: the step loop failed; failing every request", t);
            brokenBy = t;
        } finally {
            shutdown();
        }
    }

    private void idle(long now) {
        long wait = TimeUnit.MILLISECONDS.toNanos(config.metricsLogInterval().isZero() ? 1000 : Math.min(1000, config.metricsLogInterval().toMillis()));
        for (RequestState r : active) if (r.deadlineNanos != Long.MAX_VALUE) wait = Math.min(wait, Math.max(0, r.deadlineNanos - now));
        try {
            Object o = inbox.poll(Math.max(1, wait), TimeUnit.NANOSECONDS);
            if (o instanceof RequestState r) admit(r);
        } catch (InterruptedException e) {
            closing = true;
        }
    }

    private void intake() {
        Object o;
        while ((o = inbox.poll()) != null) if (o instanceof RequestState r) admit(r);
    }

    /** A new request: its first sample waits at the back of the queue (the others fork from it once its prompt is computed). */
    private void admit(RequestState r) {
        SequenceState state = newState(r, 0);
        Sample s = new Sample(r, 0, state, r.prompt.clone(), r.prompt.length);
        s.forksPending = r.samples.length > 1;
        r.samples[0] = s;
        active.add(r);
        scheduler.waiting.addLast(s);
        metrics.promptTokens.add(r.prompt.length);
    }

    private SequenceState newState(RequestState r, int sample) {
        GenerationOptions o = r.request.options();
        if (sample > 0) o = new GenerationOptions(o.maxTokens(), o.sampling().toBuilder().seed(o.sampling().seed() + sample).build(), o.stopStrings());
        return new SequenceState(r.prompt, o, tokenizer, r.request.ignoreEos() ? new int[0] : eosIds, vocabSize, contextLength);
    }

    private void endCancelledAndExpired(long now) {
        for (RequestState r : List.copyOf(active)) {
            if (r.handle.cancelRequested()) end(r, FinishReason.CANCELLED, now);
            else if (r.expired(now)) end(r, FinishReason.EXPIRED, now);
        }
    }

    /** Ends every unfinished sample of {@code r} with {@code why} and completes the request. */
    private void end(RequestState r, FinishReason why, long now) {
        r.endedBy = why;
        for (Sample s : r.samples) {
            if (s == null || s.state.finished()) continue;
            s.state.stop(why, listener(s, null));
            if (s.seqId >= 0) scheduler.release(s);
            else scheduler.dropWaiting(s);
        }
        complete(r, now);
    }

    private void complete(RequestState r, long now) {
        if (r.ended) return;
        r.ended = true;
        active.remove(r);
        if (r.firstScheduledNanos < 0) queued.decrementAndGet();
        EngineResult result = r.result(now);
        switch (result.finishReason()) {
            case CANCELLED -> metrics.cancelled.increment();
            case EXPIRED -> metrics.expired.increment();
            default -> metrics.completed.increment();
        }
        metrics.e2e.record(now - r.submitNanos);
        r.handle.complete(result);
    }

    private void fail(RequestState r, Throwable cause) {
        if (r.ended) return;
        r.ended = true;
        active.remove(r);
        if (r.firstScheduledNanos < 0) queued.decrementAndGet();
        for (Sample s : r.samples) {
            if (s == null) continue;
            if (s.seqId >= 0) scheduler.release(s);
            else scheduler.dropWaiting(s);
        }
        metrics.failed.increment();
        r.handle.fail(cause);
    }

    private void step() {
        Scheduler.Step st = scheduler.schedule();
        metrics.preemptions.add(st.preempted().size());
        if (st.samples().isEmpty()) return;
        long now = System.nanoTime();
        for (Sample s : st.samples()) {
            RequestState r = s.request;
            if (r.firstScheduledNanos < 0) {
                r.firstScheduledNanos = now;
                queued.decrementAndGet();
                metrics.queue.record(now - r.submitNanos);
            }
        }
        Batch batch;
        Logits logits;
        long t0 = System.nanoTime();
        try {
            pool.applyCopies();
            Batch.Builder b = Batch.builder(st.tokens()).blockSize(blocks.blockSize());
            for (int i = 0; i < st.samples().size(); i++) {
                Sample s = st.samples().get(i);
                int k = st.counts()[i];
                boolean logitsWanted = s.computed + k == s.length;
                for (int t = 0; t < k; t++) b.add(s.ids[s.computed + t], s.computed + t, s.seqId, logitsWanted && t == k - 1);
                b.blockTable(s.seqId, blocks.blockTable(s.seqId));
            }
            batch = b.build();
            logits = runner.forward(batch, pool.storage());
            failedStepsInARow = 0;
        } catch (RuntimeException | Error e) {
            log.warn("engine: a step of {} sequences failed; failing their requests", st.samples().size(), e);
            Set<RequestState> hit = new LinkedHashSet<>();
            for (Sample s : st.samples()) hit.add(s.request);
            for (RequestState r : hit) fail(r, e);
            if (++failedStepsInARow >= BROKEN_AFTER_FAILED_STEPS) {
                log.error("engine: {} steps in a row failed; the model is broken, shutting down", failedStepsInARow);
                brokenBy = e;
            }
            return;
        }
        long t1 = System.nanoTime();
        metrics.steps.increment();
        int row = 0, generated = 0;
        for (int i = 0; i < st.samples().size(); i++) {
            Sample s = st.samples().get(i);
            s.computed += st.counts()[i];
            blocks.markComputed(s.seqId, s.computed);
        }
        for (int i = 0; i < st.samples().size(); i++) {
            Sample s = st.samples().get(i);
            if (s.computed != s.length) continue;
            int r = row++;
            if (s.request.ended) continue; // failed on an earlier row of this step
            // Sampling, the logits observer and the detokenizer run per sequence: one that throws
            // (a row with no finite logit, an observer's bug) fails its own request, not the step.
            try {
                generated += onLogits(s, logits, r, t1);
            } catch (RuntimeException | Error e) {
                log.warn("engine: request {} failed after the step's forward; failing it", s.request.handle.id(), e);
                fail(s.request, e);
            }
        }
        if (st.prefillTokens() == 0) {
            metrics.decodeOnlySteps.increment();
            metrics.decodeOnlyTokens.add(generated);
            metrics.decodeOnlyNanos.add(t1 - t0);
        }
    }

    private void updateGauges() {
        metrics.running = scheduler.running.size();
        metrics.waiting = scheduler.waiting.size();
        metrics.preemptedWaiting = scheduler.preemptedWaiting();
        metrics.kvBlocksUsed = blocks.numUsedBlocks();
        metrics.kvBlocksFree = blocks.numFreeBlocks();
        var ps = blocks.stats();
        metrics.prefixCacheHitRate = ps.queriedBlocks() == 0 ? 0 : (double) ps.hitBlocks() / ps.queriedBlocks();
    }

    /** Samples {@code s}'s next token (and forks its siblings first if its prompt just finished); returns tokens generated. */
    private int onLogits(Sample s, Logits logits, int row, long now) {
        float[] buf = logits.buffer();
        int off = logits.offset(row);
        List<Sample> targets = new ArrayList<>(1);
        targets.add(s);
        if (s.forksPending) {
            s.forksPending = false;
            RequestState r = s.request;
            for (int c = 1; c < r.samples.length; c++) {
                Sample child = new Sample(r, c, newState(r, c), s.knownTokens(), s.length);
                r.samples[c] = child;
                scheduler.fork(s, child);
                targets.add(child);
            }
        }
        int generated = 0;
        LogitsObserver obs = logitsObserver;
        for (Sample t : targets) {
            if (obs != null) obs.onLogits(t.request.handle.id(), t.index, t.length - 1, buf, off, vocabSize);
            int token = t.state.sample(buf, off);
            EngineRequest req = t.request.request;
            // From the raw row, before the sampler's bias and penalties: vLLM's raw_logprobs.
            TokenLogprobs lp = req.wantsLogprobs() ? Logprobs.of(buf, off, vocabSize, token, req.logprobs()) : null;
            int before = t.state.generatedCount();
            boolean goesOn = t.state.accept(token, listener(t, lp));
            if (t.state.generatedCount() > before) {
                generated++;
                t.append(token);
                RequestState r = t.request;
                t.recordToken(now - r.submitNanos);
                if (r.firstTokenNanos < 0) {
                    r.firstTokenNanos = now;
                    metrics.ttft.record(now - r.submitNanos);
                }
                if (t.lastTokenNanos >= 0) metrics.interToken.record(now - t.lastTokenNanos);
                t.lastTokenNanos = now;
            }
            if (!goesOn) {
                scheduler.release(t);
                RequestState r = t.request;
                if (++r.finishedSamples == r.samples.length) complete(r, now);
            }
        }
        metrics.generatedTokens.add(generated);
        return generated;
    }

    private static TokenListener listener(Sample s, TokenLogprobs logprobs) {
        RequestHandle h = s.request.handle;
        int idx = s.index;
        return new TokenListener() {
            @Override public void onToken(int tokenId, String text) { h.emit(new TokenEvent(idx, tokenId, text, null, logprobs)); }

            @Override public void onFinish(String text, FinishReason reason) { h.emit(new TokenEvent(idx, -1, text, reason)); }
        };
    }

    private void maybeLog() {
        if (config.metricsLogInterval().isZero()) return;
        long now = System.nanoTime();
        if (now - lastLogNanos >= config.metricsLogInterval().toNanos()) {
            lastLogNanos = now;
            MetricsSnapshot m = metrics();
            log.info(m.line(lastLogged));
            lastLogged = m;
        }
    }

    private void shutdown() {
        synchronized (lifecycle) {
            stopped = true;
            closing = true;
        }
        Throwable cause = brokenBy != null ? brokenBy : new IllegalStateException("the engine closed");
        for (RequestState r : List.copyOf(active)) fail(r, cause);
        Object o;
        while ((o = inbox.poll()) != null) {
            if (o instanceof RequestState r) {
                queued.decrementAndGet();
                r.handle.fail(new IllegalStateException("the engine closed before the request started"));
            }
        }
        updateGauges();
        if (metrics.kvBlocksUsed != 0) log.error("engine: {} KV blocks still referenced at shutdown (a leak)", metrics.kvBlocksUsed);
        try {
            pool.close();
        } catch (RuntimeException e) {
            log.warn("engine: closing the KV pool failed", e);
        }
        delivery.shutdown();
        try {
            if (!delivery.awaitTermination(Math.max(1, config.closeGrace().toMillis()), TimeUnit.MILLISECONDS)) delivery.shutdownNow();
        } catch (InterruptedException e) {
            delivery.shutdownNow();
        }
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                log.warn("engine: closing the model failed", e);
            }
        }
        log.info("engine closed: {}", metrics().line());
    }
}
