package io.modelopt.cli.report;

import io.modelopt.core.model.ModelConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Calibration input for a model without calibration text (the built-in synthetic one): uniformly
 * random token ids from a fixed seed, written as a temporary token-id file ({@code *.ids}, the
 * calibration package's token-id input), so the calibrated quantizers run exactly as on text.
 * A random-weight model has no "typical" text; random ids exercise every code path and make the
 * run reproducible, and the report says that is what was used.
 */
final class SyntheticCalibration {
    /** Stream length per needed token: the quantizer draws its windows at random starts, so give it room to not repeat. */
    private static final int SPARE = 2;

    private SyntheticCalibration() {}

    /** A temporary {@code .ids} file of {@code samples × tokens × 2} random ids below the vocabulary size; delete it with {@link #delete}. */
    static Path write(ModelConfig config, int samples, int tokens, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long n = (long) samples * tokens * SPARE;
        StringBuilder sb = new StringBuilder((int) Math.min(Integer.MAX_VALUE, n * 6));
        for (long i = 0; i < n; i++) sb.append(random.nextInt(config.vocabSize())).append(i % 32 == 31 ? '\n' : ' ');
        try {
            Path f = Files.createTempFile("modelopt-report-calib-", ".ids");
            Files.writeString(f, sb, StandardCharsets.US_ASCII);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the synthetic calibration tokens: " + e.getMessage(), e);
        }
    }

    static void delete(Path f) {
        if (f == null) return;
        try {
            Files.deleteIfExists(f);
        } catch (IOException ignored) {
            // a temporary file: the OS cleans it up
        }
    }
}
