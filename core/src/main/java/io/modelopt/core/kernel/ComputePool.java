package io.modelopt.core.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The one pool of worker threads that all kernels share; its size is the {@code --threads} of
 * the commands. {@code threads - 1} daemon workers ({@code modelopt-compute-1..}) plus the calling
 * thread, which takes the first chunk itself (worker index 0).
 *
 * <p>{@link #parallelFor} allocates nothing: the task and range are published through volatile
 * fields and a generation counter. Between calls workers spin for {@link #SPIN_NANOS} (a decode
 * step issues a matmul every few tens of microseconds, and waking a parked thread costs about as
 * much), then park until the next call unparks them. The first exception thrown by any chunk is
 * rethrown to the caller once every chunk has finished.
 *
 * <p>One call at a time: concurrent {@code parallelFor} calls on the same pool are serialized.
 * A task must not call {@code parallelFor} on its own pool (that would deadlock); it is rejected.
 */
public final class ComputePool implements AutoCloseable {
    /** A piece of work over {@code [start, end)}; {@code worker} is the thread's index in [0, threads). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end, int worker);
    }

    /** How long an idle worker spins before parking. */
    static final long SPIN_NANOS = 200_000;

    private final int threads;
    private final Worker[] workers;
    private final Object callLock = new Object();

    // The current job; written by the caller before the generation bump, read by workers after it.
    private RangeTask task;
    private int n;
    /**
     * Dynamic calls: pieces of this many indices are taken from {@link #next}; 0 for a static split;
     * {@code -p} for guided pieces, multiples of {@code p} ({@link #parallelForGuided}).
     */
    private int piece;
    private final AtomicInteger next = new AtomicInteger();
    private volatile int generation;
    private final AtomicInteger pending = new AtomicInteger();
    private volatile Throwable failure;
    private volatile boolean closed;
    private volatile Thread caller;

    public ComputePool(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        this.threads = threads;
        this.workers = new Worker[threads - 1];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i + 1);
            workers[i].thread.start();
        }
    }

    public int threads() { return threads; }

    /** Chunk {@code w} of {@code [0, n)} split into {@code parts} contiguous, nearly equal pieces. */
    static int chunkStart(int n, int parts, int w) {
        return (int) ((long) n * w / parts);
    }

    /**
     * Splits {@code [0, n)} into contiguous chunks, one per worker, and runs them; returns when all
     * are done. Workers whose chunk is empty (n < threads) do not call the task.
     */
    public void parallelFor(int n, RangeTask task) {
        parallelFor(n, 0, task);
    }

    /**
     * As {@link #parallelFor(int, RangeTask)}, but the threads take pieces of {@code piece} indices
     * from a shared counter until none are left, so that a thread slowed down (by memory, by the
     * serial work of the caller, by the OS) does not hold the others up. Which thread runs an index
     * changes from call to call: the task's result for an index must not depend on the thread.
     */
    public void parallelForDynamic(int n, int piece, RangeTask task) {
        if (piece < 1) throw new IllegalArgumentException("piece must be >= 1, got " + piece);
        parallelFor(n, piece, task);
    }

    /**
     * As {@link #parallelForDynamic}, but each piece is a share of what is left: a
     * {@code 1/(2·threads)} of the remaining indices, rounded down to a multiple of {@code piece}
     * and at least {@code piece} (the last may end at {@code n}). Large pieces first keep the
     * counter quiet; small ones last let the threads finish together. Pieces start at multiples
     * of {@code piece}.
     */
    public void parallelForGuided(int n, int piece, RangeTask task) {
        if (piece < 1) throw new IllegalArgumentException("piece must be >= 1, got " + piece);
        parallelFor(n, -piece, task);
    }

    private void parallelFor(int n, int piece, RangeTask task) {
        if (n < 0) throw new IllegalArgumentException("n must be >= 0, got " + n);
        if (n == 0) return;
        if (closed) throw new IllegalStateException("ComputePool is closed");
        if (threads == 1 || n == 1) {
            task.run(0, n, 0);
            return;
        }
        if (caller == Thread.currentThread() || Thread.currentThread() instanceof PoolThread p && p.pool == this) {
            throw new IllegalStateException("parallelFor called from inside a task of the same pool");
        }
        synchronized (callLock) {
            caller = Thread.currentThread();
            try {
                run(n, piece, task);
            } finally {
                caller = null;
            }
        }
    }

    private void run(int n, int piece, RangeTask task) {
        this.task = task;
        this.n = n;
        this.piece = piece;
        next.set(0);
        this.failure = null;
        pending.set(workers.length);
        generation++; // volatile write publishes task and n
        for (Worker w : workers) {
            if (w.parked) LockSupport.unpark(w.thread);
        }
        Throwable own = null;
        try {
            if (piece != 0) runPieces(0);
            else {
                int end = chunkStart(n, threads, 1);
                if (end > 0) task.run(0, end, 0);
            }
        } catch (Throwable t) {
            own = t;
        }
        int spins = 0;
        while (pending.get() != 0) {
            if (++spins < 1 << 16) {
                Thread.onSpinWait();
            } else {
                // A long wait: the workers were parked and are being scheduled. Unparking again is
                // harmless and guards against any lost wake-up; yielding leaves the core to them.
                for (Worker w : workers) if (w.parked) LockSupport.unpark(w.thread);
                Thread.yield();
            }
        }
        this.task = null;
        Throwable t = own != null ? own : failure;
        if (t != null) {
            if (t instanceof RuntimeException re) throw re;
            if (t instanceof Error e) throw e;
            throw new IllegalStateException("compute task failed", t);
        }
    }

    /** Takes pieces of the current dynamic call until the counter passes n. */
    private void runPieces(int worker) {
        int s;
        if (piece > 0) {
            while ((s = next.getAndAdd(piece)) < n) task.run(s, Math.min(n, s + piece), worker);
            return;
        }
        int unit = -piece, share = 2 * threads;
        while ((s = next.get()) < n) {
            int take = Math.max(unit, (n - s) / share / unit * unit);
            if (next.compareAndSet(s, s + take)) task.run(s, Math.min(n, s + take), worker);
        }
    }

    /** Stops the worker threads; later {@link #parallelFor} calls fail. Idempotent. */
    @Override public void close() {
        if (closed) return;
        closed = true;
        for (Worker w : workers) LockSupport.unpark(w.thread);
        for (Worker w : workers) {
            try {
                w.thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Marks pool threads so that a nested call can be detected. */
    private static final class PoolThread extends Thread {
        final ComputePool pool;

        PoolThread(ComputePool pool, Runnable r, String name) {
            super(r, name);
            this.pool = pool;
        }
    }

    private final class Worker implements Runnable {
        final int index;
        final Thread thread;
        volatile boolean parked;
        /**
         * The last generation this worker has run, fixed before its thread starts: a thread that
         * read it itself could start after the first call's bump and then miss that call.
         */
        private int seen;

        Worker(int index) {
            this.index = index;
            this.seen = generation;
            this.thread = new PoolThread(ComputePool.this, this, "modelopt-compute-" + index);
            this.thread.setDaemon(true);
        }

        @Override public void run() {
            while (true) {
                int g = awaitGeneration(seen);
                if (g == seen) return; // closed
                seen = g;
                try {
                    if (piece != 0) runPieces(index);
                    else {
                        int start = chunkStart(n, threads, index), end = chunkStart(n, threads, index + 1);
                        if (start < end) task.run(start, end, index);
                    }
                } catch (Throwable t) {
                    if (failure == null) failure = t;
                } finally {
                    pending.decrementAndGet();
                }
            }
        }

        /** Spins, then parks, until the generation moves past {@code seen}; returns {@code seen} once closed. */
        private int awaitGeneration(int seen) {
            long spinStart = System.nanoTime();
            int g;
            while ((g = generation) == seen) {
                if (closed) return seen;
                if (System.nanoTime() - spinStart < SPIN_NANOS) {
                    Thread.onSpinWait();
                    continue;
                }
                parked = true;
                if ((g = generation) != seen || closed) {
                    parked = false;
                    return closed && g == seen ? seen : g;
                }
                LockSupport.park(this);
                parked = false;
            }
            return g;
        }
    }
}
