package io.modelopt.core.eval;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An {@link Evaluation.Result} as a Markdown table with columns padded to line up, so it reads
 * in a terminal as it does rendered: metric, base, quant, change. Callers can append rows of
 * their own (the CLI adds the process's resident memory) before {@link #render()}.
 */
public final class EvaluationTable {
    private static final String[] HEADER = {"metric", "base", "quant", "change"};
    private final List<String[]> rows = new ArrayList<>();

    private EvaluationTable() {}

    /** The standard rows of a result. */
    public static EvaluationTable of(Evaluation.Result r) {
        EvaluationTable t = new EvaluationTable();
        Evaluation.Side b = r.base(), q = r.quant();
        t.row(String.format(Locale.ROOT, "perplexity, llama.cpp method (%d × %d, %,d scored)", b.llamaCpp().windows(), r.contextLength(),
                        b.llamaCpp().tokensScored()),
                ppl(b.llamaCpp()), ppl(q.llamaCpp()), percent(r.llamaCppChangePercent()));
        t.row(String.format(Locale.ROOT, "perplexity, non-overlapping windows (%d × %d, %,d scored)", b.windows().windows(), r.contextLength(),
                        b.windows().tokensScored()),
                ppl(b.windows()), ppl(q.windows()), percent(r.windowsChangePercent()));
        t.row(String.format(Locale.ROOT, "KL divergence base → quant, mean (nats, %,d positions)", r.kl().positions()), "", nats(r.kl().meanKl()), "");
        t.row("KL divergence base → quant, max (nats)", "", nats(r.kl().maxKl()), "");
        t.row("top-1 agreement", "", String.format(Locale.ROOT, "%.3f%%", 100 * r.kl().top1Agreement()), "");
        for (int i = 0; i < r.greedy().size(); i++) {
            GreedyAgreement g = r.greedy().get(i);
            t.row(String.format(Locale.ROOT, "greedy agreement, prompt %d \"%s\"", i + 1, clip(g.promptText(), 40)), "",
                    g.agreed() + "/" + r.newTokens(), "");
        }
        t.row("bits per weight, whole model", bits(b.weights().bitsPerWeight()), bits(q.weights().bitsPerWeight()),
                percent(Evaluation.change(b.weights().bitsPerWeight(), q.weights().bitsPerWeight())));
        t.row("bits per weight, block linears (blk.N 2-D)", bits(b.weights().blockLinearBitsPerWeight()), bits(q.weights().blockLinearBitsPerWeight()),
                percent(Evaluation.change(b.weights().blockLinearBitsPerWeight(), q.weights().blockLinearBitsPerWeight())));
        t.row("file bytes", bytes(b.weights().fileBytes()), bytes(q.weights().fileBytes()),
                percent(Evaluation.change(b.weights().fileBytes(), q.weights().fileBytes())));
        long bw = b.memory().weightBytes() + b.memory().repackedBytes(), qw = q.memory().weightBytes() + q.memory().repackedBytes();
        t.row("resident bytes, runner's weights (as bound + repacked copies)", bytes(bw), bytes(qw), percent(Evaluation.change(bw, qw)));
        t.row("resident bytes, runner's total (weights + scratch buffers)", bytes(b.memory().totalBytes()), bytes(q.memory().totalBytes()),
                percent(Evaluation.change(b.memory().totalBytes(), q.memory().totalBytes())));
        return t;
    }

    /** Appends a row. */
    public EvaluationTable row(String metric, String base, String quant, String change) {
        rows.add(new String[] {metric, base, quant, change});
        return this;
    }

    /** Rows so far (header excluded), each {metric, base, quant, change}. */
    public List<String[]> rows() { return rows.stream().map(String[]::clone).toList(); }

    /** The table, one line per row, metric column left-aligned and the others right-aligned. */
    public String render() {
        int[] w = new int[HEADER.length];
        for (int c = 0; c < w.length; c++) {
            w[c] = Math.max(3, HEADER[c].length());
            for (String[] r : rows) w[c] = Math.max(w[c], r[c].length());
        }
        StringBuilder sb = new StringBuilder();
        line(sb, HEADER, w);
        sb.append("| ").append("-".repeat(w[0])).append(" |");
        for (int c = 1; c < w.length; c++) sb.append(' ').append("-".repeat(w[c] - 1)).append(": |");
        sb.append('\n');
        for (String[] r : rows) line(sb, r, w);
        return sb.toString();
    }

    @Override public String toString() { return render(); }

    private static void line(StringBuilder sb, String[] cells, int[] w) {
        sb.append("| ").append(cells[0]).append(" ".repeat(w[0] - cells[0].length())).append(" |");
        for (int c = 1; c < w.length; c++) sb.append(' ').append(" ".repeat(w[c] - cells[c].length())).append(cells[c]).append(" |");
        sb.append('\n');
    }

    static String ppl(Perplexity.Result r) { return String.format(Locale.ROOT, "%.4f ± %.4f", r.perplexity(), r.error()); }

    static String percent(double p) { return Double.isFinite(p) ? String.format(Locale.ROOT, "%+.3f%%", p) : ""; }

    static String nats(double v) { return String.format(Locale.ROOT, "%.6f", v); }

    static String bits(double v) { return String.format(Locale.ROOT, "%.3f", v); }

    static String bytes(long v) { return String.format(Locale.ROOT, "%,d", v); }

    /** The text on one line, cut to {@code max} characters with an ellipsis; pipes escaped for Markdown. */
    static String clip(String s, int max) {
        String one = s.replaceAll("\\s+", " ").strip().replace("|", "\\|");
        return one.length() <= max ? one : one.substring(0, max - 1) + "…";
    }
}
