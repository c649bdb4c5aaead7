package io.modelopt.core.synthetic;

import io.modelopt.core.ProgressListener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A folder of generated synthetic models, made once and reused (benchmarks, the {@code bench}
 * command). A model's name encodes everything its bytes depend on
 * ({@link SyntheticModel#fileName}: spec, type, seed, format version), so a file present under
 * its name is the right one. Files are generated under a temporary name in the same folder and
 * renamed into place atomically, so a crash or a concurrent generator never leaves a partial
 * model under the final name (two processes racing both generate; the second rename is a no-op
 * for identical bytes).
 *
 * <p>Location: {@code -Dmodelopt.cache=DIR} if set; else {@code <modelopt.home>/.modelopt-cache}
 * ({@code ./modelopt} passes {@code -Dmodelopt.home=<project>}); else {@code ~/.cache/modelopt}.
 */
public final class SyntheticModelCache {
    private static final Logger LOG = LoggerFactory.getLogger(SyntheticModelCache.class);

    private final Path directory;

    public SyntheticModelCache(Path directory) {
        this.directory = directory.toAbsolutePath();
    }

    /** The cache in the {@link #defaultDirectory() default directory}. */
    public static SyntheticModelCache atDefaultLocation() { return new SyntheticModelCache(defaultDirectory()); }

    public static Path defaultDirectory() {
        String explicit = System.getProperty("modelopt.cache");
        if (explicit != null && !explicit.isBlank()) return Path.of(explicit);
        String home = System.getProperty("modelopt.home");
        if (home != null && !home.isBlank()) return Path.of(home, ".modelopt-cache");
        return Path.of(System.getProperty("user.home"), ".cache", "modelopt");
    }

    public Path directory() { return directory; }

    /** Where {@code model} in {@code format} is (or would be) kept. */
    public Path pathOf(SyntheticModel model, SyntheticFormat format) {
        return directory.resolve(model.fileName(format));
    }

    /** Whether the model is already generated. */
    public boolean contains(SyntheticModel model, SyntheticFormat format) {
        Path p = pathOf(model, format);
        return format == SyntheticFormat.GGUF ? Files.isRegularFile(p) : Files.isRegularFile(p.resolve("model.safetensors"));
    }

    /** The model's path, generating it first (with progress) if the cache does not hold it. */
    public Path get(SyntheticModel model, SyntheticFormat format, ProgressListener progress) {
        Path target = pathOf(model, format);
        if (contains(model, format)) {
            LOG.debug("synthetic model {} found in the cache: {}", model, target);
            return target;
        }
        try {
            Files.createDirectories(directory);
            Path tmp = directory.resolve(".tmp-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + "-" + model.fileName(format));
            try {
                LOG.info("generating synthetic model {} ({}) into {}", model, format, target);
                model.write(format, tmp, progress);
                moveIntoPlace(tmp, target);
            } finally {
                deleteRecursively(tmp);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot generate synthetic model " + model + " into " + directory, e);
        }
    }

    private static void moveIntoPlace(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target);
        } catch (IOException e) {
            // another process finished the same model first (a directory cannot be renamed over a
            // non-empty one): same name, same bytes; keep theirs
            if (!Files.exists(target)) throw e;
            LOG.debug("{} appeared while generating; keeping the existing one", target);
        }
    }

    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) return;
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(x);
        }
    }
}
