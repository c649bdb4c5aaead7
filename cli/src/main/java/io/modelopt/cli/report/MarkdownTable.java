package io.modelopt.cli.report;

import java.util.ArrayList;
import java.util.List;

/** The report as Markdown: header lines, the aligned comparison table, footnotes and the recommendation. */
public final class MarkdownTable {
    private MarkdownTable() {}

    /** The table alone, columns padded so it reads aligned as plain text too. */
    public static String table(Report report) {
        List<Column> cols = Column.of(report);
        List<String[]> rows = new ArrayList<>();
        rows.add(cols.stream().map(Column::header).toArray(String[]::new));
        for (StageResult r : report.stages()) rows.add(cols.stream().map(c -> c.cell().apply(r)).toArray(String[]::new));
        int[] width = new int[cols.size()];
        for (String[] row : rows) for (int i = 0; i < row.length; i++) width[i] = Math.max(Math.max(width[i], row[i].length()), 3);
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            line(sb, rows.get(r), width, cols);
            if (r == 0) {
                sb.append('|');
                for (int i = 0; i < cols.size(); i++) {
                    sb.append(' ').append("-".repeat(width[i] - 1)).append(cols.get(i).numeric() ? ':' : '-').append(" |");
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String[] cells, int[] width, List<Column> cols) {
        sb.append('|');
        for (int i = 0; i < cells.length; i++) {
            String pad = " ".repeat(width[i] - cells[i].length());
            sb.append(' ').append(cols.get(i).numeric() ? pad + cells[i] : cells[i] + pad).append(" |");
        }
        sb.append('\n');
    }

    /** Everything the command prints on stdout: method, table, footnotes, recommendation. */
    public static String document(Report report) {
        StringBuilder sb = new StringBuilder("# Optimization report\n\n");
        for (String l : report.header().lines()) sb.append(l).append("\n");
        sb.append('\n').append(table(report)).append('\n');
        sb.append("¹ ").append(Report.CONCURRENT_NOTE).append('\n');
        List<StageResult> missing = report.stages().stream().filter(s -> !s.available()).toList();
        if (!missing.isEmpty()) {
            sb.append("² not available:\n");
            for (StageResult s : missing) sb.append("  - stage ").append(s.stage().number()).append(": ").append(s.unavailable()).append('\n');
        }
        for (StageResult s : report.stages()) {
            for (String n : s.notes()) sb.append("Note, stage ").append(s.stage().number()).append(": ").append(n).append('\n');
        }
        sb.append('\n');
        for (String l : report.recommendation().lines()) sb.append(l).append('\n');
        return sb.toString();
    }
}
