package io.modelopt.cli.report;

import java.util.Arrays;

/** Median and range of repeated measurements (the report never shows a single run as a figure). */
public record Spread(double median, double min, double max, int count) {
    public Spread {
        if (count < 1) throw new IllegalArgumentException("a spread needs at least one value");
        if (!(min <= median && median <= max)) throw new IllegalArgumentException("need min <= median <= max, got " + min + ", " + median + ", " + max);
    }

    public static Spread of(double... values) {
        if (values.length == 0) throw new IllegalArgumentException("a spread needs at least one value");
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        double median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        return new Spread(median, s[0], s[n - 1], n);
    }

    /** One value (a figure that does not vary between runs). */
    public static Spread exactly(double v) { return new Spread(v, v, v, 1); }
}
