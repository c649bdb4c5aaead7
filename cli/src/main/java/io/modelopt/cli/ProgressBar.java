package io.modelopt.cli;

import io.modelopt.core.ProgressListener;
import java.io.PrintStream;
import java.util.Locale;

/** Draws a one-line progress bar on a terminal stream (carriage return, no scrolling), at most ~10 times a second. */
public final class ProgressBar implements ProgressListener {
    private final PrintStream err;
    private long lastDraw;
    private String lastStage = "";
    private final long startNanos = System.nanoTime();

    public ProgressBar(PrintStream err) { this.err = err; }

    @Override public synchronized void onProgress(String stage, long done, long total) {
        long now = System.nanoTime();
        boolean finished = total > 0 && done >= total;
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
}
