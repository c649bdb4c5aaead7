package io.modelopt.scheduler;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram with fixed bucket bounds (seconds), as a Prometheus histogram publishes
 * them: cumulative counts per upper bound, a sum and a count. Thread-safe, lock-free.
 */
public final class LatencyHistogram {
    /** Upper bounds in seconds (the last bucket, +Inf, is implicit). */
    public static final double[] BOUNDS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120};

    private final String name;
    private final AtomicLongArray counts = new AtomicLongArray(BOUNDS.length + 1);
    private final LongAdder sumNanos = new LongAdder();
    private final LongAdder count = new LongAdder();

    LatencyHistogram(String name) { this.name = name; }

    public String name() { return name; }

    void record(long nanos) {
        double s = nanos / 1e9;
        int i = 0;
        while (i < BOUNDS.length && s > BOUNDS[i]) i++;
        counts.incrementAndGet(i);
        sumNanos.add(nanos);
        count.increment();
    }

    public Snapshot snapshot() {
        long[] c = new long[counts.length()];
        for (int i = 0; i < c.length; i++) c[i] = counts.get(i);
        return new Snapshot(name, c, sumNanos.sum() / 1e9, count.sum());
    }

    /**
     * @param bucketCounts per bucket (not cumulative), {@code BOUNDS.length + 1} entries, the last for +Inf
     * @param sumSeconds   the sum of the observations
     */
    public record Snapshot(String name, long[] bucketCounts, double sumSeconds, long count) {
        public Snapshot { bucketCounts = bucketCounts.clone(); }

        @Override public long[] bucketCounts() { return bucketCounts.clone(); }

        public double meanSeconds() { return count == 0 ? 0 : sumSeconds / count; }

        /** The upper bound of the bucket holding quantile {@code q} (an estimate as coarse as the buckets); +Inf past the last. */
        public double quantileUpperBound(double q) {
            if (count == 0) return 0;
            long rank = (long) Math.ceil(q * count), seen = 0;
            for (int i = 0; i < bucketCounts.length; i++) {
                seen += bucketCounts[i];
                if (seen >= rank) return i < BOUNDS.length ? BOUNDS[i] : Double.POSITIVE_INFINITY;
            }
            return Double.POSITIVE_INFINITY;
        }
    }
}
