package io.modelopt.cli.report;

import java.util.List;

/** The comparison as CSV (RFC 4180): raw numbers, bytes as bytes, absent values empty. */
public final class CsvWriter {
    private CsvWriter() {}

    public static String write(Report report) {
        StringBuilder sb = new StringBuilder();
        List<String[]> rows = Column.csvHeaderAndRows(report);
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                if (i > 0) sb.append(',');
                sb.append(quote(row[i]));
            }
            sb.append("\r\n");
        }
        return sb.toString();
    }

    static String quote(String v) {
        if (v.indexOf(',') < 0 && v.indexOf('"') < 0 && v.indexOf('\n') < 0 && v.indexOf('\r') < 0) return v;
        return '"' + v.replace("\"", "\"\"") + '"';
    }
}
