package io.modelopt.core.model;

import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.Map;

/**
 * A model as read from disk: its configuration, its tokenizer and its tensors, mapped
 * zero-copy. Tensors are keyed by their canonical (GGUF-style) name, e.g. {@code blk.0.attn_q.weight},
 * whatever the file called them (see {@link TensorNames}); shapes are in ggml order.
 * Owns the memory mappings: {@link #close()} unmaps them, after which no tensor may be used.
 */
public interface ModelSource extends AutoCloseable {
    Path path();

    /** "gguf" or "huggingface". */
    String format();

    ModelConfig config();

    Tokenizer tokenizer();

    /** Canonical name → tensor, in file order. */
    Map<String, TensorData> tensors();

    /** The file's own metadata for display (GGUF key/values, or config.json entries). */
    Map<String, Object> metadata();

    /** The name the file itself uses for a canonical tensor name (identity for GGUF). */
    String fileTensorName(String canonicalName);

    @Override void close();
}
