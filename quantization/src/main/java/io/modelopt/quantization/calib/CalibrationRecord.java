package io.modelopt.quantization.calib;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * What a calibration used, for the quantized model's metadata and the {@code evaluate} report.
 *
 * @param files           the files read, in order
 * @param tokensAvailable tokens the files gave (after tokenization)
 * @param samples         sequences drawn
 * @param sequenceLength  tokens per sequence
 * @param seed            of the random draw (ignored for {@link Sampling#SEQUENTIAL})
 * @param sampling        how windows were chosen
 * @param bos             whether each sequence starts with BOS (the tokenizer adds one)
 */
public record CalibrationRecord(List<Path> files, long tokensAvailable, int samples, int sequenceLength, long seed,
                                Sampling sampling, boolean bos) {
    /** How the windows are chosen from the token stream. */
    public enum Sampling {
        /** GPTQ/AutoAWQ style: {@code samples} windows at uniformly random starts, from a seeded generator. */
        RANDOM,
        /** llama.cpp style ({@code llama-imatrix}, {@code llama-perplexity}): consecutive chunks from the start. */
        SEQUENTIAL
    }

    public CalibrationRecord {
        files = List.copyOf(files);
    }

    /** Tokens in all samples. */
    public long tokens() { return (long) samples * sequenceLength; }

    /** One line: {@code 128 x 512 tokens (random, seed 0) from train.txt (231042 tokens)}. */
    public String summary() {
        StringBuilder names = new StringBuilder();
        for (Path p : files) names.append(names.isEmpty() ? "" : ", ").append(p.getFileName());
        return String.format(Locale.ROOT, "%d x %d tokens (%s%s%s) from %s (%d tokens)", samples, sequenceLength,
                sampling.name().toLowerCase(Locale.ROOT), sampling == Sampling.RANDOM ? ", seed " + seed : "", bos ? ", BOS first" : "",
                names, tokensAvailable);
    }

    @Override public String toString() { return summary(); }
}
