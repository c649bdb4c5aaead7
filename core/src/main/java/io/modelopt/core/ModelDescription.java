package io.modelopt.core;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code ModelOptimizer.load(path).describe()} reports: the architecture and dimensions,
 * every tensor (canonical name, the file's own name, dtype, shape in ggml order, bytes, and the
 * weight format it is read as), the totals, bits per weight and the tokenizer.
 * {@link #toString()} is the text {@code modelopt inspect} prints.
 *
 * <p>A weight stored as several tensors (our INT formats: codes, scales, zero points; AutoAWQ's
 * {@code qweight}/{@code qzeros}/{@code scales}) is found through the registered
 * {@link WeightBinders}: its main tensor carries the weight's format and parameter count, the
 * others name it in {@link Tensor#partOf()} and count no parameters.
 *
 * @param parameterCount weights as the model computes with them (a packed weight counts its
 *                       logical {@code rows × cols}, not its int32 words)
 */
public record ModelDescription(Path path, String format, ModelConfig config, String tokenizer,
                               List<Tensor> tensors, long totalBytes, long parameterCount) {

    /**
     * One tensor row. {@code shape} is in ggml order (ne0 = contiguous row length).
     *
     * @param weightFormat the format the weight is read as: a registered format's name
     *                     ({@code INT4_G128_ASYM}) for a bound weight, else the ggml type's name
     * @param partOf       the weight this tensor is a part of (a scale, a zero point), or null
     * @param parameters   logical weights (0 for a part)
     * @param bytes        this tensor's bytes; {@link #weightBytes} adds its parts'
     * @param weightBytes  bytes of the whole weight (main tensor and parts); 0 for a part
     */
    public record Tensor(String name, String fileName, GgmlType type, long[] shape, long bytes,
                         String weightFormat, String partOf, long parameters, long weightBytes) {
        public String shapeText() {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < shape.length; i++) sb.append(i == 0 ? "" : ", ").append(shape[i]);
            return sb.append(']').toString();
        }

        /** Stored bits per logical weight (main tensor and parts), or NaN for a part. */
        public double bitsPerWeight() { return parameters == 0 ? Double.NaN : 8.0 * weightBytes / parameters; }

        /** A block's linear weight ({@code blk.N.*.weight}, two or more dims, or a bound weight of block N under any name). */
        public boolean isBlockLinear() {
            // a bound weight is a linear layer whatever its main tensor is called (AWQ/GPTQ: blk.N.attn_q.qweight)
            // (or keeps its HF name: model.layers.N.self_attn.q_proj.qweight)
            return partOf == null && (name.startsWith("blk.") || name.startsWith("model.layers."))
                    && (bound() || name.endsWith(".weight") && trimmedRank(shape) >= 2);
        }

        private boolean bound() { return !weightFormat.equals(type.name()); }
    }

    public ModelDescription {
        tensors = List.copyOf(tensors);
    }

    /** Builds the description of an open model source. */
    public static ModelDescription of(ModelSource source) {
        Map<String, TensorData> all = source.tensors();
        Map<String, WeightMatrix> bound = new HashMap<>();
        Map<String, String> partOf = new HashMap<>();
        for (String name : all.keySet()) {
            for (String candidate : new String[] {name, weightNameOf(name)}) {
                if (candidate == null || bound.containsKey(candidate) || partOf.containsKey(candidate)) continue;
                WeightMatrix w = bindQuietly(source, candidate);
                if (w == null || w.format().name().equals(w.type().name())) continue;
                bound.put(w.tensor().name(), w);
                for (int i = 0; i < w.partCount(); i++) partOf.put(w.part(i).name(), w.tensor().name());
            }
        }
        List<Tensor> rows = new ArrayList<>();
        long bytes = 0, params = 0;
        for (TensorData t : all.values()) {
            WeightMatrix w = bound.get(t.name());
            String owner = partOf.get(t.name());
            long p = owner != null ? 0 : w != null ? (long) w.rows() * w.cols() : t.elementCount();
            long wb = owner != null ? 0 : w != null ? w.byteSize() : t.byteSize();
            String fmt = w != null ? w.format().name() : t.type().name();
            rows.add(new Tensor(t.name(), source.fileTensorName(t.name()), t.type(), t.shape(), t.byteSize(), fmt, owner, p, wb));
            bytes += t.byteSize();
            params += p;
        }
        String tok;
        try {
            tok = source.tokenizer().describe();
        } catch (RuntimeException e) {
            tok = "unavailable (" + e.getMessage() + ")";
        }
        return new ModelDescription(source.path(), source.format(), source.config(), tok, rows, bytes, params);
    }

    /**
     * {@code blk.0.attn_q.qweight} → {@code blk.0.attn_q.weight}, {@code model.layers.0.self_attn.q_proj.qweight} →
     * {@code blk.0.attn_q.weight}: the weight a differently named part may belong to.
     */
    private static String weightNameOf(String name) {
        int dot = name.lastIndexOf('.');
        if (dot < 0 || name.endsWith(".weight")) return null;
        String w = name.substring(0, dot) + ".weight";
        // an HF checkpoint's part (model.layers.0.self_attn.q_proj.qweight) belongs to the weight the runner binds by its GGUF name
        return io.modelopt.core.model.TensorNames.toGguf(w).orElse(w);
    }

    private static WeightMatrix bindQuietly(ModelSource source, String name) {
        try {
            return WeightBinders.bind(source, name);
        } catch (RuntimeException e) {
            return null; // a binder that recognizes the name but not the tensors: shown as plain tensors
        }
    }

    /** Stored bits per weight of the whole model (every tensor's bytes over the logical parameters). */
    public double bitsPerWeight() { return parameterCount == 0 ? 0 : 8.0 * totalBytes / parameterCount; }

    /** Stored bits per weight of the blocks' linear weights alone (q, k, v, o, gate, up, down), parts included. */
    public double blockLinearBitsPerWeight() {
        long b = 0, p = 0;
        for (Tensor t : tensors) {
            if (!t.isBlockLinear()) continue;
            b += t.weightBytes();
            p += t.parameters();
        }
        return p == 0 ? 0 : 8.0 * b / p;
    }

    /** Logical weights per weight format ({@code Q4_K}, {@code INT4_G128_ASYM}, {@code F32}...), parts excluded. */
    public Map<String, Long> parametersByFormat() {
        Map<String, Long> m = new TreeMap<>();
        for (Tensor t : tensors) if (t.partOf() == null) m.merge(t.weightFormat(), t.parameters(), Long::sum);
        return m;
    }

    private static int trimmedRank(long[] shape) {
        int n = shape.length;
        while (n > 1 && shape[n - 1] == 1) n--;
        return n;
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
        sb.append("kv bytes/tok:");
        for (io.modelopt.core.kv.KvDtype d : io.modelopt.core.kv.KvDtype.values()) {
            var l = io.modelopt.core.kv.KvLayout.of(c.numLayers(), c.numKvHeads(), c.headDim(), 1, 16, d);
            sb.append(String.format(Locale.ROOT, " %s %,.0f", d.cliName(), l.bytesPerToken()));
        }
        sb.append(" (keys+values, all layers, scales included)\n");
        sb.append(String.format(Locale.ROOT, "tensors:      %d, %,d parameters, %,d bytes", tensors.size(), parameterCount, totalBytes));
        StringBuilder types = new StringBuilder();
        bytesByType().forEach((t, b) -> types.append(types.isEmpty() ? "" : ", ").append(t).append(' ').append(String.format(Locale.ROOT, "%,d", b)));
        sb.append(" (").append(types).append(")\n");
        sb.append(String.format(Locale.ROOT, "bits/weight:  %.3f whole model, %.3f block linears%n", bitsPerWeight(), blockLinearBitsPerWeight()));
        int w = 4, fw = 6;
        for (Tensor t : tensors) {
            w = Math.max(w, t.name().length());
            fw = Math.max(fw, t.partOf() != null ? 4 : t.weightFormat().length());
        }
        sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-6s  %-20s  %14s  %-" + fw + "s  %7s  %s%n", "name", "dtype", "shape (ggml order)", "bytes",
                "format", "bits/w", "name in file"));
        for (Tensor t : tensors) {
            String fmt = t.partOf() != null ? "part" : t.weightFormat();
            String bpw = t.partOf() != null ? "" : String.format(Locale.ROOT, "%.3f", t.bitsPerWeight());
            String file = t.fileName() == null || t.fileName().equals(t.name()) ? "" : t.fileName();
            sb.append(String.format(Locale.ROOT, "  %-" + w + "s  %-6s  %-20s  %,14d  %-" + fw + "s  %7s  %s%n", t.name(), t.type(), t.shapeText(), t.bytes(),
                    fmt, bpw, file));
        }
        return sb.toString();
    }

    private static String trim(float f) {
        return f == Math.rint(f) ? String.valueOf((long) f) : String.valueOf(f);
    }
}
