package io.modelopt.cli.report;

import java.util.Locale;

/** How figures are printed, the same in the table, the recommendation and the chart. */
final class Format {
    private Format() {}

    static final String NA = "n/a";

    static final double MIB = 1024.0 * 1024.0;

    /** Bytes as MiB with one decimal. */
    static String mib(long bytes) {
        return bytes < 0 ? NA : String.format(Locale.ROOT, "%.1f", bytes / MIB);
    }

    /** A speed or time: three significant digits at least, one decimal below 1000. */
    static String number(double v) {
        if (Double.isNaN(v)) return NA;
        if (v == Math.rint(v) && Math.abs(v) < 1e9) return String.format(Locale.ROOT, "%d", (long) v);
        double a = Math.abs(v);
        if (a >= 100) return String.format(Locale.ROOT, "%.1f", v);
        if (a >= 1) return String.format(Locale.ROOT, "%.2f", v);
        return String.format(Locale.ROOT, "%.3g", v);
    }

    /** A one-decimal figure (speeds, milliseconds). */
    static String fixed1(double v) {
        return Double.isNaN(v) ? NA : String.format(Locale.ROOT, "%.1f", v);
    }

    /** Median with its range: {@code 12.3 (11.9-12.8)}. */
    static String spread(Spread s) {
        if (s == null) return NA;
        return fixed1(s.median()) + " (" + fixed1(s.min()) + "-" + fixed1(s.max()) + ")";
    }

    /** KL in nats: small values matter, so scientific below 0.001. */
    static String kl(double v) {
        if (Double.isNaN(v)) return NA;
        if (v == 0) return "0";
        if (v < 1e-3) return String.format(Locale.ROOT, "%.2e", v);
        return String.format(Locale.ROOT, "%.4f", v);
    }

    static String percent(double fraction) {
        return Double.isNaN(fraction) ? NA : String.format(Locale.ROOT, "%.1f %%", 100 * fraction);
    }

    static String signedPercent(double pct) {
        return Double.isNaN(pct) ? NA : String.format(Locale.ROOT, "%+.2f %%", pct);
    }

    static String bits(double v) {
        return Double.isNaN(v) ? NA : String.format(Locale.ROOT, "%.2f", v);
    }
}
