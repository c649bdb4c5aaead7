package io.modelopt.cli.report;

import io.modelopt.core.ProgressListener;
import java.util.Locale;

/**
 * Progress of a report: "stage i of n (key): what it is doing", drawn by the CLI's progress bar
 * (in place on a terminal, plain lines otherwise). Work below (quantizers, evaluation) reports
 * its own stage names; they are replaced by this one so the display says where the report is.
 */
final class ReportProgress {
    private final ProgressListener out;
    private final int total;
    private String prefix = "";

    ReportProgress(ProgressListener out, int stages) {
        this.out = out;
        this.total = stages;
    }

    void stage(int index, Stage stage) {
        prefix = String.format(Locale.ROOT, "stage %d of %d (%s)", index, total, stage.key());
    }

    /** A one-off step ("loading"). */
    void step(String what) { out.onProgress(prefix + ": " + what, 0, -1); }

    /** A counted step ("measured run", 3, 5). */
    void count(String what, long done, long of) { out.onProgress(prefix + ": " + what, done, of); }

    /** A listener for work below that labels everything {@code what}. */
    ProgressListener as(String what) {
        return (ignored, done, of) -> out.onProgress(prefix + ": " + what, done, of);
    }
}
