package io.modelopt.core.eval;

import io.modelopt.core.ModelDescription;
import io.modelopt.core.model.ModelSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * How big a model is as stored: bytes of its files and of its tensors, and bits per weight, of
 * the whole model and of the block linears alone (the {@code blk.N.*} 2-D weights, what a
 * quantization method changes; embeddings, {@code output} and norms often stay wide and would
 * hide the method's own rate).
 *
 * <p>Bits per weight are tensor bytes × 8 over elements, exactly as stored (block scales and
 * zero points included), the figure llama.cpp prints as BPW.
 *
 * @param fileBytes              the GGUF file's size, or for a directory the sum of the regular files in it
 *                               (weights, config and tokenizer files)
 * @param parameters             elements of all tensors
 * @param tensorBytes            bytes of all tensors
 * @param blockLinearParameters  elements of the {@code blk.N.*} tensors with two dimensions
 * @param blockLinearBytes       their bytes
 */
public record WeightStats(long fileBytes, long parameters, long tensorBytes, long blockLinearParameters, long blockLinearBytes) {
    private static final Pattern BLOCK_TENSOR = Pattern.compile("blk\\.\\d+\\..+");

    /**
     * Counts through {@link ModelDescription}: a weight stored as several tensors (our INT formats'
     * codes, scales and zero points; AutoAWQ's and GPTQ's packed int32 words) counts its logical
     * {@code rows × cols} once, its parts only as bytes (counting the int32 words as elements would
     * make INT4 look like 30 bits per weight).
     */
    public static WeightStats of(ModelSource source) {
        ModelDescription d = ModelDescription.of(source);
        long linParams = 0, linBytes = 0;
        for (ModelDescription.Tensor t : d.tensors()) {
            if (t.partOf() == null && (t.isBlockLinear() || t.shape().length == 2 && BLOCK_TENSOR.matcher(t.name()).matches())) {
                linParams += t.parameters();
                linBytes += t.weightBytes();
            }
        }
        return new WeightStats(fileBytes(source.path()), d.parameterCount(), d.totalBytes(), linParams, linBytes);
    }

    /** Tensor bits per element over the whole model. */
    public double bitsPerWeight() { return parameters == 0 ? 0 : 8.0 * tensorBytes / parameters; }

    /** Tensor bits per element over the block linears alone. */
    public double blockLinearBitsPerWeight() { return blockLinearParameters == 0 ? 0 : 8.0 * blockLinearBytes / blockLinearParameters; }

    static long fileBytes(Path path) {
        try {
            if (!Files.isDirectory(path)) return Files.size(path);
            try (Stream<Path> files = Files.list(path)) {
                long sum = 0;
                for (Path f : (Iterable<Path>) files::iterator) if (Files.isRegularFile(f)) sum += Files.size(f);
                return sum;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the size of " + path, e);
        }
    }
}
