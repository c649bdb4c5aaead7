package io.modelopt.quantization.model;

import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.gguf.GgufValue;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.quantization.policy.QuantizationPlan;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;

/**
 * A model quantized into memory by {@link RtnModelQuantizer}: every tensor lives in one arena
 * this source owns ({@link #close()} frees it), so it needs nothing of the model it came from,
 * which may be closed (or its file replaced) at once. Our INT weights are stored as
 * {@code PackedIntTensors} and named in the metadata for {@code PackedIntBinder}; everything else
 * is a plain ggml tensor, read by the default binding.
 */
public final class QuantizedModelSource implements ModelSource {
    private final Path path;
    private final String inputFormat;
    private final ModelConfig config;
    private final Tokenizer tokenizer;
    private final RuntimeException tokenizerError;
    private final Map<String, TensorData> tensors;
    private final Map<String, Object> metadata;
    private final Map<String, String> fileNames;
    private final Map<String, GgufValue> ggufMetadata;
    private final QuantizationSpec spec;
    private final QuantizationPlan plan;
    private final Arena arena;

    QuantizedModelSource(Path path, String inputFormat, ModelConfig config, Tokenizer tokenizer, RuntimeException tokenizerError,
                         Map<String, TensorData> tensors, Map<String, Object> metadata, Map<String, String> fileNames,
                         Map<String, GgufValue> ggufMetadata, QuantizationSpec spec, QuantizationPlan plan, Arena arena) {
        this.path = path;
        this.inputFormat = inputFormat;
        this.config = config;
        this.tokenizer = tokenizer;
        this.tokenizerError = tokenizerError;
        this.tensors = Collections.unmodifiableMap(tensors);
        this.metadata = Collections.unmodifiableMap(metadata);
        this.fileNames = fileNames;
        this.ggufMetadata = ggufMetadata == null ? null : Collections.unmodifiableMap(ggufMetadata);
        this.spec = spec;
        this.plan = plan;
        this.arena = arena;
    }

    /** The input's path (nothing is read from it any more). */
    @Override public Path path() { return path; }

    /** {@code "quantized"}: the tensors are in memory, not in a file. */
    @Override public String format() { return "quantized"; }

    /** The input's format ({@code gguf}, {@code huggingface}). */
    public String inputFormat() { return inputFormat; }

    @Override public ModelConfig config() { return config; }

    @Override public Tokenizer tokenizer() {
        if (tokenizer == null) throw tokenizerError;
        return tokenizer;
    }

    @Override public Map<String, TensorData> tensors() { return tensors; }

    /**
     * The input's metadata, plus {@code modelopt.weight_format.<name>} for each INT weight and
     * {@code modelopt.quantization} (the spec and the resulting bits per weight).
     */
    @Override public Map<String, Object> metadata() { return metadata; }

    /** The input's file name of a tensor kept or rewritten; a part of an INT weight has its own name. */
    @Override public String fileTensorName(String canonicalName) { return fileNames.getOrDefault(canonicalName, canonicalName); }

    /** The input's typed GGUF metadata (vocabulary arrays included) when it was a GGUF file, else null. */
    public Map<String, GgufValue> ggufMetadata() { return ggufMetadata; }

    public QuantizationSpec spec() { return spec; }

    /** What was done to each tensor. */
    public QuantizationPlan plan() { return plan; }

    /** Bytes of all tensors (what this source holds in memory). */
    public long byteSize() {
        long n = 0;
        for (TensorData t : tensors.values()) n += t.byteSize();
        return n;
    }

    @Override public void close() {
        if (arena.scope().isAlive()) arena.close();
    }

    @Override public String toString() { return "QuantizedModelSource[" + spec + " of " + path + ", " + tensors.size() + " tensors]"; }
}
