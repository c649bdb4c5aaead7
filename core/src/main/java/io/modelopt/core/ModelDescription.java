package io.modelopt.core;

import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code ModelOptimizer.load(path).describe()} reports: the architecture and dimensions,
 * every tensor (canonical name, the file's own name, dtype, shape in ggml order, bytes), the
 * totals and the tokenizer. {@link #toString()} is the text {@code modelopt inspect} prints.
 */
public record ModelDescription(Path path, String format, ModelConfig config, String tokenizer,
                               List<Tensor> tensors, long totalBytes, long parameterCount) {

    /** One tensor row. {@code shape} is in ggml order (ne0 = contiguous row length). */
    public record Tensor(String name, String fileName, GgmlType type, long[] shape, long bytes) {
        public String shapeText() {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < shape.length; i++) sb.append(i == 0 ? "" : ", ").append(shape[i]);
            return sb.append(']').toString();
        }
    }

    public ModelDescription {
        tensors = List.copyOf(tensors);
    }

    /** Builds the description of an open model source. */
    public static ModelDescription of(ModelSource source) {
        List<Tensor> rows = new ArrayList<>();
        long bytes = 0, params = 0;
        for (TensorData t : source.tensors().values()) {
            rows.add(new Tensor(t.name(), source.fileTensorName(t.name()), t.type(), t.shape(), t.byteSize()));
            bytes += t.byteSize();
            params += t.elementCount();
        }
        String tok;
        try {
            tok = source.tokenizer().describe();
        } catch (RuntimeException e) {
            tok = "unavailable (" + e.getMessage() + ")";
        }
        return new ModelDescription(source.path(), source.format(), source.config(), tok, rows, bytes, params);
    }

    /** Bytes per tensor type, for the summary line. */
    public Map<GgmlType, Long> bytesByType() {
        Map<GgmlType, Long> m = new EnumMap<>(GgmlType.class);
        for (Tensor t : tensors) m.merge(t.type(), t.bytes(), Long::sum);
        return m;
    }

    @Override public String toString() {
        ModelConfig c = config;
        StringBuilder sb = new StringBuilder();
        sb.append("model:        ").append(path).append(" (").append(format).append(")\n");
        sb.append("architecture: ").append(c.architecture().hfClass()).append('\n');
        sb.append(String.format(Locale.ROOT, "dims:         hidden %d, layers %d, heads %d (kv heads %d, head dim %d), ffn %d, vocab %d, context %d%n",
                c.hiddenSize(), c.numLayers(), c.numHeads(), c.numKvHeads(), c.headDim(), c.intermediateSize(), c.vocabSize(), c.contextLength()));
        sb.append(String.format(Locale.ROOT, "rope:         theta %s, %s%s%n", trim(c.ropeTheta()),
                c.ropeConvention() == io.modelopt.core.model.RopeConvention.ADJACENT_PAIRS ? "adjacent pairs (GGUF-permuted Q/K)" : "rotate_half (HF order)",
                c.ropeScaling() == null ? "" : ", scaling " + c.ropeScaling()));
        sb.append(String.format(Locale.ROOT, "norm:         RMSNorm eps %s; tied embeddings: %s; qkv bias: %s; dtype %s%n",
                c.rmsNormEps(), c.tieWordEmbeddings() ? "yes" : "no", c.attentionBias() ? "yes" : "no", c.dtype()));
        sb.append("tokenizer:    ").append(tokenizer).append('\n');
        sb.append(String.format(Locale.ROOT, "tensors:      %d, %,d parameters, %,d bytes", tensors.size(), parameterCount, totalBytes));
        StringBuilder types = new StringBuilder();
        bytesByType().forEach((t, b) -> types.append(types.isEmpty() ? "" : ", ").append(t).append(' ').append(String.format(Locale.ROOT, "%,d", b)));
        sb.append(" (").append(types).append(")\n");
        int w = 4;
        for (Tensor t : tensors) w = Math.max(w, t.name().length());
        sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-6s  %-20s  %14s  %s%n", "name", "dtype", "shape (ggml order)", "bytes", "name in file"));
        for (Tensor t : tensors) {
            sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-6s  %-20s  %,14d  %s%n", t.name(), t.type(), t.shapeText(), t.bytes(),
                    t.fileName().equals(t.name()) ? "" : t.fileName()));
        }
        return sb.toString();
    }

    private static String trim(float f) {
        return f == Math.rint(f) ? String.valueOf((long) f) : String.valueOf(f);
    }
}
