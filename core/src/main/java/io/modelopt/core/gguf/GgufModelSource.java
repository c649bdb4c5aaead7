package io.modelopt.core.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.GgufVocabulary;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.core.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A model in one GGUF file: config from its metadata ({@link GgufConfigReader}), tokenizer from
 * its {@code tokenizer.ggml.*} keys, tensors zero-copy under their GGUF names (which are the
 * canonical names). Owns the {@link GgufFile}; {@link #close()} unmaps it.
 *
 * <p>The tokenizer is built on the first {@link #tokenizer()} call, so that a model whose
 * vocabulary the tokenizer code cannot handle still loads for tensor-level work (quantization,
 * inspection).
 */
public final class GgufModelSource implements ModelSource {
    /** Arrays longer than this are shown as a summary in {@link #metadata()}. */
    static final int METADATA_ARRAY_LIMIT = 256;

    private final GgufFile file;
    private final ModelConfig config;
    private volatile Tokenizer tokenizer;

    private GgufModelSource(GgufFile file, ModelConfig config) {
        this.file = file;
        this.config = config;
    }

    /**
     * Opens {@code path} and reads its config.
     *
     * @throws ModelFormatException the file is not a valid GGUF, or its architecture or a required key is missing/unsupported
     */
    public static GgufModelSource open(Path path) {
        GgufFile f = GgufFile.open(path);
        try {
            return new GgufModelSource(f, GgufConfigReader.read(f));
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** The underlying file, for typed metadata access. */
    public GgufFile gguf() { return file; }

    @Override public Path path() { return file.path(); }

    @Override public String format() { return "gguf"; }

    @Override public ModelConfig config() { return config; }

    /** The embedded vocabulary in plain form. */
    public GgufVocabulary vocabulary() { return GgufVocabularyReader.read(file); }

    @Override public Tokenizer tokenizer() {
        Tokenizer t = tokenizer;
        if (t == null) {
            synchronized (this) {
                t = tokenizer;
                if (t == null) tokenizer = t = Tokenizers.fromGguf(vocabulary());
            }
        }
        return t;
    }

    @Override public Map<String, TensorData> tensors() { return file.tensors(); }

    /**
     * Key → plain Java value in file order (see {@link GgufValue#toJava()}); arrays longer than
     * {@value #METADATA_ARRAY_LIMIT} elements are summarized as a string like {@code "array<STRING>[4096]"}.
     */
    @Override public Map<String, Object> metadata() {
        Map<String, Object> out = new LinkedHashMap<>();
        file.metadata().forEach((k, v) -> out.put(k, v instanceof GgufValue.Array a && a.size() > METADATA_ARRAY_LIMIT
                ? "array<" + a.elementType() + ">[" + a.size() + "]" : v.toJava()));
        return Collections.unmodifiableMap(out);
    }

    /** GGUF names are canonical: identity. */
    @Override public String fileTensorName(String canonicalName) { return canonicalName; }

    @Override public void close() { file.close(); }

    @Override public String toString() { return "GgufModelSource[" + file.path() + ", " + config + "]"; }
}
