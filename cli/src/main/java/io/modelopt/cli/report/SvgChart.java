package io.modelopt.cli.report;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The report as an SVG a browser opens: three panels side by side, memory by stage (weights, KV
 * and other stacked, with the RSS peak marked), decode tokens/s and TTFT by stage (two axes, the
 * min-max range as whiskers), and quality by stage (perplexity change with --text, else mean KL).
 * Plain SVG 1.1 with no script or external reference, so it renders the same everywhere.
 */
public final class SvgChart {
    private SvgChart() {}

    static final int PANEL_W = 420, PANEL_H = 430, TOP = 56, WIDTH = 3 * PANEL_W + 40, HEIGHT = TOP + PANEL_H + 24;
    /** Plot area inside a panel. */
    private static final int PL = 70, PR = 62, PT = 52, PB = 118;
    static final String WEIGHTS = "#4e79a7", KV = "#f28e2b", OTHER = "#bab0ac", DECODE = "#59a14f", TTFT = "#e15759", QUALITY = "#76b7b2";

    public static String write(Report report) {
        StringBuilder s = new StringBuilder();
        s.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        s.append("<title>modelopt report: ").append(esc(report.header().model())).append("</title>\n");
        s.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>%n", WIDTH, HEIGHT));
        text(s, 20, 26, "start", 16, "bold", "chart-title", "Optimization report: " + report.header().model());
        text(s, 20, 44, "start", 11, "normal", "chart-subtitle", String.format(Locale.ROOT, "%d threads, prompt %d, decode %d tokens, median of %d runs; %s; %s",
                report.header().threads(), report.header().promptTokens(), report.header().genTokens(), report.header().runs(), report.header().cpu(),
                report.header().date()));
        List<StageResult> st = report.stages();
        memoryPanel(s, 20, TOP, st);
        speedPanel(s, 20 + PANEL_W, TOP, st);
        qualityPanel(s, 20 + 2 * PANEL_W, TOP, st, report.hasPerplexity());
        s.append("</svg>\n");
        return s.toString();
    }

    // ------------------------------------------------------------------ panels

    private static void memoryPanel(StringBuilder s, int x0, int y0, List<StageResult> st) {
        open(s, "panel-memory", x0, y0, "Memory by stage");
        double max = 0;
        for (StageResult r : st) {
            if (!r.available()) continue;
            max = Math.max(max, r.memory().totalBytes() / Format.MIB);
            max = Math.max(max, r.memory().rssPeakBytes() / Format.MIB);
        }
        Axis a = Axis.of(max);
        leftAxis(s, a, "memory (MiB)");
        stageAxis(s, st);
        double slot = plotW() / (double) st.size(), bw = Math.min(60, slot * 0.55);
        for (int i = 0; i < st.size(); i++) {
            StageResult r = st.get(i);
            double cx = PL + slot * (i + 0.5);
            if (!r.available()) {
                na(s, cx);
                continue;
            }
            double base = 0;
            long[] parts = {r.memory().weightBytes(), r.memory().kvBytes(), r.memory().otherBytes()};
            String[] colors = {WEIGHTS, KV, OTHER};
            String[] names = {"weights", "KV", "other"};
            for (int p = 0; p < 3; p++) {
                double v = parts[p] / Format.MIB;
                rect(s, cx - bw / 2, a.y(base + v), bw, a.y(base) - a.y(base + v), colors[p],
                        "stage " + r.stage().number() + " " + names[p] + ": " + Format.mib(parts[p]) + " MiB");
                base += v;
            }
            text(s, cx, a.y(base) - 4, "middle", 10, "normal", "value", Format.mib(r.memory().totalBytes()));
            if (r.memory().rssPeakBytes() > 0) {
                double y = a.y(r.memory().rssPeakBytes() / Format.MIB);
                s.append(String.format(Locale.ROOT, "<line class=\"rss-peak\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" "
                        + "stroke-width=\"2\" stroke-dasharray=\"4 2\"><title>stage %d RSS peak %s MiB</title></line>%n",
                        cx - bw / 2 - 6, y, cx + bw / 2 + 6, y, r.stage().number(), Format.mib(r.memory().rssPeakBytes())));
            }
        }
        legend(s, new String[] {"weights", "KV cache", "other (activations)", "RSS peak (dashed)"}, new String[] {WEIGHTS, KV, OTHER, null});
        close(s);
    }

    private static void speedPanel(StringBuilder s, int x0, int y0, List<StageResult> st) {
        open(s, "panel-speed", x0, y0, "Decode speed and TTFT by stage");
        Axis left = Axis.of(maxOf(st, r -> r.speed().decodePerSecond().max()));
        Axis right = Axis.of(maxOf(st, r -> r.speed().ttftMillis().max()));
        leftAxis(s, left, "decode (tokens/s)");
        rightAxis(s, right, "TTFT (ms)");
        stageAxis(s, st);
        double slot = plotW() / (double) st.size(), bw = Math.min(34, slot * 0.3);
        for (int i = 0; i < st.size(); i++) {
            StageResult r = st.get(i);
            double cx = PL + slot * (i + 0.5);
            if (!r.available()) {
                na(s, cx);
                continue;
            }
            bar(s, left, cx - bw / 2 - 2, bw, r.speed().decodePerSecond(), DECODE, "stage " + r.stage().number() + " decode tokens/s");
            bar(s, right, cx + bw / 2 + 2, bw, r.speed().ttftMillis(), TTFT, "stage " + r.stage().number() + " TTFT ms");
        }
        legend(s, new String[] {"decode tokens/s (left axis)", "TTFT ms (right axis)", "whiskers: min-max of the runs"}, new String[] {DECODE, TTFT, null});
        close(s);
    }

    private static void qualityPanel(StringBuilder s, int x0, int y0, List<StageResult> st, boolean perplexity) {
        open(s, "panel-quality", x0, y0, perplexity ? "Quality by stage: perplexity change" : "Quality by stage: KL divergence");
        ToDoubleFunction<StageResult> f = perplexity ? r -> r.quality().perplexityChangePercent() : r -> r.quality().meanKl();
        Axis a = Axis.of(maxOf(st, f));
        leftAxis(s, a, perplexity ? "perplexity change vs baseline (%)" : "mean KL vs baseline (nats)");
        stageAxis(s, st);
        double slot = plotW() / (double) st.size(), bw = Math.min(60, slot * 0.55);
        for (int i = 0; i < st.size(); i++) {
            StageResult r = st.get(i);
            double cx = PL + slot * (i + 0.5);
            if (!r.available()) {
                na(s, cx);
                continue;
            }
            double v = Math.max(0, f.applyAsDouble(r));
            String label = perplexity ? Format.signedPercent(f.applyAsDouble(r)) : Format.kl(v);
            rect(s, cx - bw / 2, a.y(v), bw, a.y(0) - a.y(v), QUALITY, "stage " + r.stage().number() + ": " + label);
            text(s, cx, a.y(v) - 16, "middle", 10, "normal", "value", label);
            text(s, cx, a.y(v) - 4, "middle", 10, "normal", "value", "top-1 " + Format.percent(r.quality().top1Agreement()));
        }
        legend(s, new String[] {perplexity ? "(PPL_stage / PPL_baseline - 1), %" : "mean KL(P_baseline || P_stage), nats", "label: top-1 agreement with the baseline"},
                new String[] {QUALITY, null});
        close(s);
    }

    // ------------------------------------------------------------------ pieces

    /** A linear axis from 0 to a "nice" maximum with 5-ish ticks. */
    record Axis(double max, double step) {
        static Axis of(double dataMax) {
            if (!(dataMax > 0) || Double.isInfinite(dataMax)) return new Axis(1, 0.2);
            double raw = dataMax / 5, mag = Math.pow(10, Math.floor(Math.log10(raw))), n = raw / mag;
            double step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
            return new Axis(Math.ceil(dataMax / step * 1.0000001) * step, step);
        }

        double y(double v) { return PT + plotH() * (1 - Math.min(v, max) / max); }
    }

    private static double plotW() { return PANEL_W - PL - PR; }

    private static double plotH() { return PANEL_H - PT - PB; }

    private static double maxOf(List<StageResult> st, ToDoubleFunction<StageResult> f) {
        double m = 0;
        for (StageResult r : st) if (r.available()) {
            double v = f.applyAsDouble(r);
            if (!Double.isNaN(v)) m = Math.max(m, v);
        }
        return m;
    }

    private static void open(StringBuilder s, String id, int x0, int y0, String title) {
        s.append(String.format(Locale.ROOT, "<g id=\"%s\" class=\"panel\" transform=\"translate(%d,%d)\">%n", id, x0, y0));
        s.append(String.format(Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#dddddd\"/>%n", PANEL_W - 10, PANEL_H));
        text(s, (PANEL_W - 10) / 2.0, 24, "middle", 14, "bold", "panel-title", title);
    }

    private static void close(StringBuilder s) { s.append("</g>\n"); }

    private static void leftAxis(StringBuilder s, Axis a, String label) { axis(s, a, label, PL, -1); }

    private static void rightAxis(StringBuilder s, Axis a, String label) { axis(s, a, label, PL + plotW(), 1); }

    private static void axis(StringBuilder s, Axis a, String label, double x, int side) {
        s.append(String.format(Locale.ROOT, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>%n", x, PT, x, PT + plotH()));
        for (double v = 0; v <= a.max() + a.step() / 2; v += a.step()) {
            double y = a.y(v);
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>%n", x, y, x + 5 * side, y));
            if (side < 0) {
                s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eeeeee\"/>%n", x, y, x + plotW(), y));
            }
            text(s, x + 8 * side, y + 4, side < 0 ? "end" : "start", 10, "normal", "tick", tick(v, a.step()));
        }
        double lx = side < 0 ? 16 : PANEL_W - 18, ly = PT + plotH() / 2;
        s.append(String.format(Locale.ROOT, "<text class=\"axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(%d %.1f %.1f)\">%s</text>%n",
                lx, ly, side < 0 ? -90 : 90, lx, ly, esc(label)));
    }

    private static void stageAxis(StringBuilder s, List<StageResult> st) {
        double y = PT + plotH();
        s.append(String.format(Locale.ROOT, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>%n", PL, y, PL + plotW(), y));
        double slot = plotW() / (double) st.size();
        for (int i = 0; i < st.size(); i++) {
            double cx = PL + slot * (i + 0.5);
            text(s, cx, y + 16, "middle", 11, "bold", "stage-label", "stage " + st.get(i).stage().number());
            text(s, cx, y + 30, "middle", 10, "normal", "stage-label", st.get(i).stage().key());
        }
        text(s, PL + plotW() / 2, y + 48, "middle", 12, "normal", "axis-label", "stage");
    }

    /** Legend entries flowed left to right under the stage axis, wrapping at the panel's edge (about 6 px per character at 10 px). */
    private static void legend(StringBuilder s, String[] names, String[] colors) {
        double x = 12, y = PT + plotH() + 70, right = PANEL_W - 20;
        for (int i = 0; i < names.length; i++) {
            double w = (colors[i] != null ? 14 : 0) + names[i].length() * 6.0 + 14;
            if (x > 12 && x + w > right) {
                x = 12;
                y += 15;
            }
            if (colors[i] != null) rect(s, x, y - 9, 10, 10, colors[i], null);
            text(s, x + (colors[i] != null ? 14 : 0), y, "start", 10, "normal", "legend", names[i]);
            x += w;
        }
    }

    private static void bar(StringBuilder s, Axis a, double cx, double bw, Spread v, String color, String what) {
        rect(s, cx - bw / 2, a.y(v.median()), bw, a.y(0) - a.y(v.median()), color, what + ": " + Format.spread(v));
        double y1 = a.y(v.min()), y2 = a.y(v.max());
        s.append(String.format(Locale.ROOT, "<path class=\"whisker\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"#000000\" fill=\"none\"/>%n",
                cx, y1, y2, cx - 4, y1, cx + 4, cx - 4, y2, cx + 4));
        text(s, cx, y2 - 4, "middle", 9, "normal", "value", Format.number(v.median()));
    }

    private static void na(StringBuilder s, double cx) {
        text(s, cx, PT + plotH() - 8, "middle", 11, "normal", "not-available", "n/a");
    }

    private static void rect(StringBuilder s, double x, double y, double w, double h, String color, String title) {
        s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y, w, Math.max(0, h), color));
        if (title == null) s.append("/>\n");
        else s.append("><title>").append(esc(title)).append("</title></rect>\n");
    }

    private static void text(StringBuilder s, double x, double y, String anchor, int size, String weight, String cls, String t) {
        s.append(String.format(Locale.ROOT, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s>%s</text>%n",
                cls, x, y, anchor, size, weight.equals("bold") ? " font-weight=\"bold\"" : "", esc(t)));
    }

    private static String tick(double v, double step) {
        if (step >= 1) return String.format(Locale.ROOT, "%.0f", v);
        int decimals = (int) Math.ceil(-Math.log10(step) - 1e-9);
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    static String esc(String t) {
        StringBuilder b = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }
}
