package io.modelopt.cli;

import io.modelopt.core.ProgressListener;
import java.io.PrintStream;
import java.util.Locale;

/**
 * Shows progress: on a terminal a one-line bar redrawn in place (carriage return, no scrolling),
 * at most ~10 times a second; otherwise (output to a file or a pipe) plain lines, one when a stage
 * starts, then one every 10% of it and one when it ends, so logs stay readable.
 */
public final class ProgressBar implements ProgressListener {
    private final PrintStream err;
    private final boolean terminal;
    private long lastDraw;
    private String lastStage = "";
    private int lastDecile = -1;
    private final long startNanos = System.nanoTime();

    /** A bar on {@code err}, drawn in place when the process has a terminal ({@link System#console()}). */
    public ProgressBar(PrintStream err) { this(err, System.console() != null && System.console().isTerminal()); }

    public ProgressBar(PrintStream err, boolean terminal) {
        this.err = err;
        this.terminal = terminal;
    }

    private static volatile boolean silenced;

    /** Every bar of the process draws nothing from now on ({@code --quiet}). */
    public static void silence() { silenced = true; }

    /** Lets bars draw again (tests, which share one JVM). */
    static void unsilence() { silenced = false; }

    @Override public synchronized void onProgress(String stage, long done, long total) {
        if (silenced) return;
        long now = System.nanoTime();
        boolean finished = total > 0 && done >= total;
        if (!terminal) {
            plain(stage, done, total, finished, now);
            return;
        }
        if (!finished && stage.equals(lastStage) && now - lastDraw < 100_000_000L) return;
        lastDraw = now;
        lastStage = stage;
        double secs = (now - startNanos) / 1e9;
        String line;
        if (total > 0) {
            int width = 30;
            int filled = (int) Math.min(width, done * width / total);
            line = String.format(Locale.ROOT, "\r%s [%s%s] %d/%d  %.1fs", stage, "#".repeat(filled), ".".repeat(width - filled), done, total, secs);
        } else {
            line = String.format(Locale.ROOT, "\r%s %d  %.1fs", stage, done, secs);
        }
        err.print(line);
        if (finished) err.println();
        err.flush();
    }

    private void plain(String stage, long done, long total, boolean finished, long now) {
        int decile = total > 0 ? (int) Math.min(10, done * 10 / total) : -1;
        boolean newStage = !stage.equals(lastStage);
        if (!newStage && !finished && (total <= 0 || decile == lastDecile)) return;
        if (!newStage && finished && lastDecile == 10) return;
        lastStage = stage;
        lastDecile = decile;
        double secs = (now - startNanos) / 1e9;
        if (total > 0) err.printf(Locale.ROOT, "%s %d/%d (%d%%)  %.1fs%n", stage, done, total, decile * 10, secs);
        else err.printf(Locale.ROOT, "%s %d  %.1fs%n", stage, done, secs);
        err.flush();
    }
}
