package io.modelopt.cli.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/** Writes a report's files into the output folder, each to a temporary name first, then moved into place. */
public final class ReportFiles {
    private ReportFiles() {}

    public static final String MARKDOWN = "report.md", CSV = "report.csv", JSON = "report.json", SVG = "report.svg";

    /** Writes report.md, report.csv, report.json and report.svg into {@code dir} (created if needed); returns their paths. */
    public static List<Path> write(Report report, Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the output folder " + dir + ": " + e.getMessage(), e);
        }
        List<Path> written = new ArrayList<>();
        written.add(write(dir.resolve(MARKDOWN), MarkdownTable.document(report)));
        written.add(write(dir.resolve(CSV), CsvWriter.write(report)));
        written.add(write(dir.resolve(JSON), JsonWriter.write(report)));
        written.add(write(dir.resolve(SVG), SvgChart.write(report)));
        return written;
    }

    /** {@code text} to {@code file} through a temporary file beside it, so a reader never sees half a file. */
    public static Path write(Path file, String text) {
        Path abs = file.toAbsolutePath();
        try {
            Path parent = abs.getParent();
            if (parent != null) Files.createDirectories(parent);
            Path tmp = Files.createTempFile(parent, "." + abs.getFileName(), ".tmp");
            try {
                Files.writeString(tmp, text, StandardCharsets.UTF_8);
                try {
                    Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
            return abs;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
