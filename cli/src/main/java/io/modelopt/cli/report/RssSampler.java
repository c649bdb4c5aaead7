package io.modelopt.cli.report;

import io.modelopt.cli.command.ProcessMemory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

/**
 * The process's resident set during a stage, sampled by a daemon thread (VmRSS of
 * /proc/self/status every {@link #PERIOD_MILLIS} ms), not only read at the end: the peak of a
 * stage is reached while it loads or quantizes, and the runs after show the steady state.
 *
 * <p>Stages run one after another in one process, and VmHWM (the kernel's peak) only grows, so
 * each stage first resets it (writing 5 to /proc/self/clear_refs, Linux 4.0+); the stage's peak is
 * the larger of the samples and VmHWM when the reset worked. Without /proc every figure is -1.
 */
final class RssSampler implements AutoCloseable {
    /** Often enough to see a load's peak, rarely enough to cost nothing (one small file read). */
    static final long PERIOD_MILLIS = 25;
    private static final Path CLEAR_REFS = Path.of("/proc/self/clear_refs");

    /** Peak and steady resident set of one stage, bytes (-1: unknown). */
    record Rss(long peakBytes, long steadyBytes) {}

    private final boolean supported;
    private final Thread thread;
    private volatile boolean running = true;
    private long peak = -1;
    private boolean steady, hwmReset;
    private final List<Long> steadySamples = new ArrayList<>();

    RssSampler() {
        this.supported = ProcessMemory.rss().isPresent();
        this.thread = Thread.ofPlatform().daemon().name("report-rss-sampler").unstarted(this::loop);
        if (supported) thread.start();
    }

    private void loop() {
        while (running) {
            sample();
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void sample() {
        OptionalLong rss = ProcessMemory.rss();
        if (rss.isEmpty()) return;
        synchronized (this) {
            peak = Math.max(peak, rss.getAsLong());
            if (steady) steadySamples.add(rss.getAsLong());
        }
    }

    /** A stage starts: return what the last one freed to the OS, then forget the last peak (and reset the kernel's). */
    synchronized void beginStage() {
        NativeMemory.release();
        peak = -1;
        steady = false;
        steadySamples.clear();
        hwmReset = resetHighWaterMark();
        sample();
    }

    /** The measured runs start: samples from here on give the steady figure. */
    void beginSteady() {
        sample();
        synchronized (this) { steady = true; }
        sample();
    }

    /** The measured runs are over. */
    void endSteady() {
        sample();
        synchronized (this) { steady = false; }
    }

    /** The stage is over: its peak and steady resident set. */
    synchronized Rss endStage() {
        sample();
        if (!supported) return new Rss(-1, -1);
        long p = peak;
        if (hwmReset) {
            OptionalLong hwm = ProcessMemory.peakRss();
            if (hwm.isPresent()) p = Math.max(p, hwm.getAsLong());
        }
        long steadyBytes = -1;
        if (!steadySamples.isEmpty()) {
            long[] v = steadySamples.stream().mapToLong(Long::longValue).toArray();
            Arrays.sort(v);
            steadyBytes = v[v.length / 2];
        }
        return new Rss(p, steadyBytes);
    }

    private static boolean resetHighWaterMark() {
        try {
            Files.writeString(CLEAR_REFS, "5", StandardCharsets.US_ASCII);
            return true;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return false;
        }
    }

    @Override public void close() {
        running = false;
        thread.interrupt();
    }
}
