package io.modelopt.core.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds {@code ../shared/fixtures} from the project root (the parent pom passes
 * {@code modelopt.shared.dir}), never from the module folder a test runs in.
 *
 * <p>Where the folder is absent a test is skipped with a clear message, except under CI
 * ({@code CI=true}), where it fails: a suite that silently skipped everything must not pass CI.
 */
public final class Fixtures {
    private Fixtures() {}

    /** The fixtures root, or skips/fails the calling test when it is absent. */
    public static Path root() {
        String shared = System.getProperty("modelopt.shared.dir");
        Path dir = shared != null ? Path.of(shared).resolve("fixtures") : null;
        if (dir == null || !Files.isDirectory(dir)) {
            String msg = "test fixtures not found at " + (dir == null ? "<modelopt.shared.dir unset>" : dir.toAbsolutePath().normalize())
                    + " (expected ../shared/fixtures beside the project root)";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) fail(msg + "; CI=true requires them");
            assumeTrue(false, "skipped: " + msg);
        }
        return dir.toAbsolutePath().normalize();
    }

    /** A path under the fixtures root; skips/fails like {@link #root()}, and fails if the file itself is missing. */
    public static Path file(String relative) {
        Path p = root().resolve(relative);
        if (!Files.exists(p)) fail("fixture file missing: " + p);
        return p;
    }

    public static Path storiesGguf(String type) { return file("stories260K/gguf/stories260K-" + type + ".gguf"); }
    public static Path storiesHf() { return file("stories260K/hf"); }
    public static Path brownGguf(String type) { return file("brown-llama/gguf/brown-llama-" + type + ".gguf"); }
    public static Path brownHf() { return file("brown-llama/hf"); }
}
