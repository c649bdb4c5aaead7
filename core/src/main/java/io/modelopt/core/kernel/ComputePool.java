package io.modelopt.core.kernel;

/**
 * The one pool of worker threads that all kernels share; its size is the {@code --threads}
 * of the commands. Placeholder API: the kernels issue replaces the body with a fixed pool of
 * spinning/parking workers that runs a range task without allocating.
 */
public final class ComputePool implements AutoCloseable {
    /** A piece of work over {@code [start, end)}; {@code worker} is the thread's index in [0, threads). */
    @FunctionalInterface
    public interface RangeTask {
        void run(int start, int end, int worker);
    }

    private final int threads;

    public ComputePool(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        this.threads = threads;
    }

    public int threads() { return threads; }

    /** Splits {@code [0, n)} into contiguous chunks, one per worker, and runs them; returns when all are done. */
    public void parallelFor(int n, RangeTask task) {
        task.run(0, n, 0);
    }

    @Override public void close() {}
}
