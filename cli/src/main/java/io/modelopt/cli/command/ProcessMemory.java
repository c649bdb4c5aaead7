package io.modelopt.cli.command;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * The process's memory as Linux reports it: peak and current resident set ({@code VmHWM},
 * {@code VmRSS} of {@code /proc/self/status}) and how much of a file's mappings is resident (the
 * {@code Rss} of every {@code /proc/self/smaps} mapping of that file). The last one shows whether
 * the weights are used in place from the page cache (mapped Rss ≈ weight bytes, RSS not twice
 * that) or copied. Elsewhere (no {@code /proc}) every figure is empty.
 */
public final class ProcessMemory {
    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path SMAPS = Path.of("/proc/self/smaps");

    private ProcessMemory() {}

    /**
     * Peak resident set size in bytes: {@code VmHWM}, or the current RSS when that is higher (the
     * kernel updates the high-water mark lazily, so a fresh VmRSS can exceed it).
     */
    public static OptionalLong peakRss() {
        OptionalLong hwm = statusField("VmHWM:"), now = rss();
        if (hwm.isEmpty()) return now;
        return OptionalLong.of(Math.max(hwm.getAsLong(), now.orElse(0)));
    }

    /** Current resident set size in bytes ({@code VmRSS}). */
    public static OptionalLong rss() { return statusField("VmRSS:"); }

    private static OptionalLong statusField(String name) {
        if (!Files.isReadable(STATUS)) return OptionalLong.empty();
        try {
            for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
                if (line.startsWith(name)) return OptionalLong.of(kilobytes(line));
            }
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + STATUS, e);
        }
    }

    /** Resident and total sizes of the mappings of some files. */
    record Mapped(long rssBytes, long sizeBytes, int mappings) {}

    /**
     * Sums {@code Rss} and {@code Size} over every mapping whose path is one of {@code files}
     * (compared as real paths), or empty where {@code /proc/self/smaps} does not exist.
     */
    static java.util.Optional<Mapped> mappedFiles(Collection<Path> files) {
        if (!Files.isReadable(SMAPS)) return java.util.Optional.empty();
        Set<String> wanted = new TreeSet<>();
        for (Path f : files) {
            try {
                wanted.add(f.toRealPath().toString());
            } catch (IOException e) {
                wanted.add(f.toAbsolutePath().normalize().toString());
            }
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(SMAPS, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + SMAPS, e);
        }
        return java.util.Optional.of(sum(lines, wanted));
    }

    /** The sums over the smaps text {@code lines} for mappings of the {@code wanted} paths. */
    static Mapped sum(List<String> lines, Set<String> wanted) {
        long rss = 0, size = 0;
        int count = 0;
        boolean inWanted = false;
        for (String line : lines) {
            if (isMappingHeader(line)) {
                inWanted = wanted.contains(pathOf(line));
                if (inWanted) count++;
            } else if (inWanted && line.startsWith("Rss:")) {
                rss += kilobytes(line);
            } else if (inWanted && line.startsWith("Size:")) {
                size += kilobytes(line);
            }
        }
        return new Mapped(rss, size, count);
    }

    /** A header line: {@code start-end perms offset dev inode [path]}; field lines are {@code Name: value}. */
    private static boolean isMappingHeader(String line) {
        int dash = line.indexOf('-');
        int space = line.indexOf(' ');
        return dash > 0 && space > dash && line.charAt(0) != ' ' && !line.substring(0, space).contains(":");
    }

    /** The path of a header line: everything after the 5th field (paths may contain spaces). */
    private static String pathOf(String header) {
        int fields = 0, i = 0, n = header.length();
        while (i < n && fields < 5) {
            while (i < n && header.charAt(i) != ' ') i++;
            while (i < n && header.charAt(i) == ' ') i++;
            fields++;
        }
        String p = header.substring(i);
        return p.endsWith(" (deleted)") ? p.substring(0, p.length() - 10) : p;
    }

    /** "Name:   1234 kB" → 1234 × 1024. */
    private static long kilobytes(String line) {
        String[] parts = line.trim().split("\\s+");
        return Long.parseLong(parts[1]) * 1024;
    }
}
