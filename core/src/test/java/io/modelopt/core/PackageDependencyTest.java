package io.modelopt.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package structure ggml keeps: the compute layer ({@code kernel}) depends on no package of
 * the model, the engine, the backends or the file formats, and no two packages depend on each
 * other, except the facade ({@code io.modelopt.core} itself, whose entry points reach every
 * module and whose shared types, such as {@link ModelFormatException}, every module throws).
 * Read from the main sources: every reference {@code io.modelopt.core.pkg.Type}, imported or
 * written out, outside comments.
 */
class PackageDependencyTest {
    private static final Path SOURCES = Path.of(System.getProperty("basedir", "."), "src/main/java/io/modelopt/core");
    private static final Pattern REFERENCE = Pattern.compile("io\\.modelopt\\.core\\.((?:[a-z0-9]+\\.)*)[A-Z*]");
    private static final String ROOT = "(facade)";

    @Test void kernelsDependOnlyOnTensorsQuantsAndKvStorage() {
        Set<String> allowed = Set.of("tensor", "quant", "kv");
        Set<String> kernel = graph().getOrDefault("kernel", Set.of());
        Set<String> extra = new TreeSet<>(kernel);
        extra.removeAll(allowed);
        assertEquals(Set.of(), extra, "the kernel package depends on " + extra);
    }

    @Test void noTwoPackagesDependOnEachOtherBesideTheFacade() {
        Map<String, Set<String>> g = graph();
        assertTrue(g.size() > 10, "packages found under " + SOURCES.toAbsolutePath() + ": " + g.keySet());
        List<String> cycles = new ArrayList<>();
        for (var e : g.entrySet()) {
            for (String b : e.getValue()) {
                String a = e.getKey();
                if (a.compareTo(b) < 0 && !a.equals(ROOT) && !b.equals(ROOT) && g.getOrDefault(b, Set.of()).contains(a)) cycles.add(a + " <-> " + b);
            }
        }
        assertEquals(List.of(), cycles);
    }

    /** Package (relative to io.modelopt.core) → the core packages its sources reference. */
    private static Map<String, Set<String>> graph() {
        Map<String, Set<String>> g = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Path dir = SOURCES.relativize(f.getParent());
                String pkg = dir.toString().isEmpty() ? ROOT : dir.toString().replace(f.getFileSystem().getSeparator(), ".");
                String src = Files.readString(f).replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "");
                Set<String> deps = g.computeIfAbsent(pkg, k -> new TreeSet<>());
                Matcher m = REFERENCE.matcher(src);
                while (m.find()) {
                    String target = m.group(1).isEmpty() ? ROOT : m.group(1).substring(0, m.group(1).length() - 1);
                    if (!target.equals(pkg)) deps.add(target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return g;
    }
}
