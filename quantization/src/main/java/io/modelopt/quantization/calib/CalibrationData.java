package io.modelopt.quantization.calib;

import io.modelopt.core.QuantizationSpec.CalibrationSpec;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.quantization.calib.CalibrationRecord.Sampling;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The calibration sequences: {@code samples} windows of {@code sequenceLength} token ids cut from
 * the concatenated token stream of the calibration files.
 *
 * <p>A text file is tokenized as llama.cpp's tools do ({@code encode(text, true, true)}: the
 * tokenizer's own BOS setting applies); a file named {@code *.ids} or {@code *.tokens} holds
 * token ids as whitespace-separated decimal integers, used as they are. When the tokenizer adds
 * BOS, the first token of every window is BOS (as {@code llama-perplexity} and {@code llama-imatrix}
 * do), so each sample looks like the start of a prompt.
 *
 * <p>Windows are drawn at random starts from a seeded generator ({@link Sampling#RANDOM}, GPTQ's
 * and AutoAWQ's way: windows may overlap when the text is short) or taken as consecutive chunks
 * ({@link Sampling#SEQUENTIAL}, llama.cpp's way). The same files, tokenizer and seed give the same
 * samples.
 */
public final class CalibrationData {
    /** Default samples (GPTQ's and AutoAWQ's 128). */
    public static final int DEFAULT_SAMPLES = 128;
    /** Default tokens per sample (capped at the model's context). */
    public static final int DEFAULT_SEQUENCE_LENGTH = 512;

    private final int[][] samples;
    private final CalibrationRecord record;

    private CalibrationData(int[][] samples, CalibrationRecord record) {
        this.samples = samples;
        this.record = record;
    }

    /** Sequences in hand-made form (tests; already tokenized), recorded as coming from no file. */
    public static CalibrationData of(int[][] samples) {
        if (samples.length == 0) throw new IllegalArgumentException("calibration needs at least one sample");
        int len = samples[0].length;
        int[][] copy = new int[samples.length][];
        for (int i = 0; i < samples.length; i++) {
            if (samples[i].length != len || len == 0) throw new IllegalArgumentException("calibration sample " + i + " has " + samples[i].length + " tokens, not " + len);
            copy[i] = samples[i].clone();
        }
        return new CalibrationData(copy, new CalibrationRecord(List.of(), (long) len * samples.length, samples.length, len, 0, Sampling.SEQUENTIAL, false));
    }

    /**
     * Random windows per {@code spec}, the sequence length capped at {@code contextLength}.
     *
     * @throws IllegalArgumentException an empty file, or fewer tokens than one sample (saying how many)
     * @throws UncheckedIOException     a file that cannot be read
     */
    public static CalibrationData load(CalibrationSpec spec, Tokenizer tokenizer, int contextLength) {
        return load(spec.files(), tokenizer, spec.samples(), Math.min(spec.sequenceLength(), contextLength), spec.seed(), Sampling.RANDOM);
    }

    /**
     * {@code samples} windows of {@code length} tokens from {@code files}.
     *
     * @param samples for {@link Sampling#SEQUENTIAL}, at most this many chunks (fewer when the text runs out)
     */
    public static CalibrationData load(List<Path> files, Tokenizer tokenizer, int samples, int length, long seed, Sampling sampling) {
        if (files.isEmpty()) throw new IllegalArgumentException("calibration needs at least one file");
        if (samples < 1) throw new IllegalArgumentException("calibration samples must be positive, got " + samples);
        if (length < 2) throw new IllegalArgumentException("calibration sequence length must be at least 2, got " + length);
        int[] stream = tokens(files, tokenizer);
        boolean bos = tokenizer.addsBos() && tokenizer.bosId() >= 0;
        if (stream.length < length) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "calibration text too short: %s gave %d tokens, one sample needs %d",
                    names(files), stream.length, length));
        }
        int[][] out;
        if (sampling == Sampling.SEQUENTIAL) {
            int n = Math.min(samples, stream.length / length);
            out = new int[n][];
            for (int i = 0; i < n; i++) out[i] = Arrays.copyOfRange(stream, i * length, (i + 1) * length);
        } else {
            SplittableRandom random = new SplittableRandom(seed);
            out = new int[samples][];
            int starts = stream.length - length + 1;
            for (int i = 0; i < samples; i++) {
                int s = random.nextInt(starts);
                out[i] = Arrays.copyOfRange(stream, s, s + length);
            }
        }
        if (bos) for (int[] s : out) s[0] = tokenizer.bosId();
        return new CalibrationData(out, new CalibrationRecord(files, stream.length, out.length, length, seed, sampling, bos));
    }

    private static int[] tokens(List<Path> files, Tokenizer tokenizer) {
        List<int[]> parts = new ArrayList<>();
        long total = 0;
        for (Path f : files) {
            int[] ids;
            try {
                if (Files.size(f) == 0) throw new IllegalArgumentException("calibration file " + f + " is empty");
                String name = f.getFileName().toString();
                if (name.endsWith(".ids") || name.endsWith(".tokens")) ids = parseIds(f, Files.readString(f, StandardCharsets.US_ASCII), tokenizer.vocabSize());
                else ids = tokenizer.encode(Files.readString(f, StandardCharsets.UTF_8), true, true);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read calibration file " + f + ": " + e.getMessage(), e);
            }
            if (ids.length == 0 || (ids.length == 1 && ids[0] == tokenizer.bosId())) throw new IllegalArgumentException("calibration file " + f + " has no tokens");
            parts.add(ids);
            total += ids.length;
        }
        if (total > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("calibration files hold " + total + " tokens, more than one array can");
        int[] all = new int[(int) total];
        int o = 0;
        for (int[] p : parts) {
            System.arraycopy(p, 0, all, o, p.length);
            o += p.length;
        }
        return all;
    }

    private static int[] parseIds(Path f, String text, int vocab) {
        String[] words = text.trim().split("\\s+");
        int[] ids = new int[words.length];
        for (int i = 0; i < words.length; i++) {
            try {
                ids[i] = Integer.parseInt(words[i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("token-id file " + f + ": word " + i + " '" + words[i] + "' is not an integer");
            }
            if (ids[i] < 0 || ids[i] >= vocab) throw new IllegalArgumentException("token-id file " + f + ": id " + ids[i] + " at " + i + " outside the vocabulary of " + vocab);
        }
        return ids;
    }

    private static String names(List<Path> files) {
        StringBuilder b = new StringBuilder();
        for (Path p : files) b.append(b.isEmpty() ? "" : ", ").append(p);
        return b.toString();
    }

    public int size() { return samples.length; }

    public int sequenceLength() { return samples[0].length; }

    /** Sample {@code i}'s token ids (a copy). */
    public int[] sample(int i) { return samples[i].clone(); }

    public CalibrationRecord record() { return record; }
}
