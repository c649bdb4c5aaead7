package io.modelopt.quantization.hf;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.json.Json;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.core.spi.ModelExporter;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntScheme;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a Hugging Face model directory in one tool's quantized layout: {@code config.json} (the
 * source's, or one made from its {@link ModelConfig}, plus {@code quantization_config} in that
 * tool's fields), {@code model.safetensors} (the quantized linears in the tool's tensors, every
 * other tensor in its own dtype, or F32 when it is a ggml block type), and, for an HF source, its
 * tokenizer files and {@code generation_config.json}. A GGUF source's vocabulary is not converted
 * to tokenizer files (core has no writer for them): a warning says so.
 *
 * <p>Everything is written into a temporary directory beside {@code out} and moved into place
 * when complete; an existing {@code out} is replaced (refusing it unless forced is the caller's
 * job). Every linear is checked before anything is written: a weight whose scheme the layout
 * cannot hold is refused with the formats that can.
 *
 * <p>Rows are output channels in HF order: a source whose Q/K rows are in GGUF adjacent-pair
 * order ({@link RopeConvention#ADJACENT_PAIRS}) has them permuted back to {@code rotate_half}
 * order ({@link TensorNames#hfRowOf}).
 */
public abstract class HfCheckpointExporter implements ModelExporter {
    private static final Logger log = LoggerFactory.getLogger(HfCheckpointExporter.class);

    /** Files copied from an HF source directory when present. */
    static final List<String> SIDE_FILES = List.of("generation_config.json", "tokenizer.json", "tokenizer_config.json", "tokenizer.model",
            "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt", "chat_template.jinja", "chat_template.json");

    /** One linear of the model: its canonical and HF module names and, when quantized, its matrix and layout. */
    protected record Linear(String name, String module, WeightMatrix matrix, IntLayout layout) {
        boolean quantized() { return layout != null; }

        IntScheme scheme() { return layout.scheme(); }
    }

    /** Checks that every quantized linear fits this layout (throw {@link IllegalArgumentException} naming the tensor and the formats that can). */
    protected abstract void check(List<Linear> linears);

    /** The {@code quantization_config} object for these linears. */
    protected abstract Map<String, Object> quantizationConfig(List<Linear> linears);

    /** Adds the tensors of one quantized linear under {@code module + "."} names. */
    protected abstract void addQuantized(SafetensorsWriter w, String module, LogicalWeight weight);

    @Override public void export(ModelSource source, Path out, ProgressListener progress) {
        ProgressListener p = progress == null ? ProgressListener.NONE : progress;
        List<Linear> linears = linears(source);
        check(linears);
        Path target = out.toAbsolutePath();
        Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp-" + Long.toHexString(System.nanoTime()));
        try {
            Files.createDirectories(tmp);
            Map<String, Object> config = baseConfig(source);
            config.remove("quantization_config");
            Map<String, Object> qc = quantizationConfig(linears);
            recordCalibration(source, qc);
            config.put("quantization_config", qc);
            Files.writeString(tmp.resolve("config.json"), Json.writePretty(config) + "\n", StandardCharsets.UTF_8);
            copySideFiles(source, tmp);
            SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
            addTensors(source, linears, w, p);
            w.write(tmp.resolve("model.safetensors"));
            if (Files.exists(target)) deleteTree(target);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            log.info("wrote {} checkpoint {} ({} linears quantized)", format(), target, linears.stream().filter(Linear::quantized).count());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + format() + " checkpoint " + out + ": " + e.getMessage(), e);
        } finally {
            try {
                if (Files.exists(tmp)) deleteTree(tmp);
            } catch (IOException e) {
                log.warn("cannot remove temporary directory {}: {}", tmp, e.getMessage());
            }
        }
    }

    /** Every linear of the config, bound as the engine binds it. */
    static List<Linear> linears(ModelSource source) {
        ModelConfig c = source.config();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < c.numLayers(); i++) {
            for (String s : List.of("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")) names.add("blk." + i + "." + s + ".weight");
        }
        if (source.tensors().containsKey("output.weight") || WeightBinders.bind(source, "output.weight") != null) names.add("output.weight");
        List<Linear> out = new ArrayList<>();
        for (String n : names) {
            String hf = TensorNames.toHfOrSelf(n);
            String module = hf.substring(0, hf.length() - ".weight".length());
            WeightMatrix m = WeightBinders.bind(source, n);
            if (m == null) {
                out.add(new Linear(n, module, null, null));
                continue;
            }
            IntLayout layout = HfFormats.layout(m.format()).orElse(null);
            if (layout == null) {
                throw new IllegalArgumentException("weight " + n + " is in format " + m.format() + ", which is not a group-wise integer format;"
                        + " the HF layouts (awq, gptq, compressed-tensors) hold only those (export it as gguf)");
            }
            out.add(new Linear(n, module, m, layout));
        }
        return out;
    }

    /** The export formats among awq, gptq and compressed-tensors that hold {@code scheme}, for messages. */
    static String formatsThatHold(IntScheme scheme) {
        List<String> f = new ArrayList<>();
        if (AwqExporter.holds(scheme)) f.add("awq");
        if (GptqExporter.holds(scheme)) f.add("gptq");
        if (CompressedTensorsExporter.holds(scheme)) f.add("compressed-tensors");
        return f.isEmpty() ? "none of awq, gptq, compressed-tensors" : String.join(", ", f);
    }

    static IllegalArgumentException cannotHold(String format, Linear l, String why) {
        return new IllegalArgumentException(format + " cannot hold " + l.name() + " (" + l.scheme() + "): " + why
                + "; formats that can: " + formatsThatHold(l.scheme()));
    }

    private void addTensors(ModelSource source, List<Linear> linears, SafetensorsWriter w, ProgressListener p) {
        ModelConfig c = source.config();
        Map<String, Linear> byName = new LinkedHashMap<>();
        for (Linear l : linears) byName.put(l.name(), l);
        List<String> order = new ArrayList<>();
        order.add("token_embd.weight");
        for (int i = 0; i < c.numLayers(); i++) {
            String b = "blk." + i + ".";
            order.add(b + "attn_norm.weight");
            for (String s : List.of("attn_q", "attn_k", "attn_v")) {
                order.add(b + s + ".weight");
                if (source.tensors().containsKey(b + s + ".bias")) order.add(b + s + ".bias");
            }
            order.add(b + "attn_output.weight");
            order.add(b + "ffn_norm.weight");
            for (String s : List.of("ffn_gate", "ffn_up", "ffn_down")) order.add(b + s + ".weight");
        }
        order.add("output_norm.weight");
        if (byName.containsKey("output.weight")) order.add("output.weight");
        int done = 0;
        for (String name : order) {
            p.onProgress("export " + format(), done++, order.size());
            Linear l = byName.get(name);
            IntUnaryOperator rows = hfRowOrder(c, name);
            if (l != null && l.quantized()) {
                addQuantized(w, l.module(), LogicalWeight.read(l.matrix(), l.layout(), rows));
                continue;
            }
            TensorData t = source.tensors().get(name);
            if (t == null) throw new IllegalArgumentException("the model has no tensor " + name + " to export");
            addPlain(w, TensorNames.toHfOrSelf(name), t, rows);
        }
        p.onProgress("export " + format(), order.size(), order.size());
    }

    /** Source row of each HF row: identity, or for Q/K of a GGUF-ordered source the adjacent-pair row. */
    private static IntUnaryOperator hfRowOrder(ModelConfig c, String name) {
        if (c.ropeConvention() != RopeConvention.ADJACENT_PAIRS) return r -> r;
        boolean q = name.endsWith("attn_q.weight") || name.endsWith("attn_q.bias");
        boolean k = name.endsWith("attn_k.weight") || name.endsWith("attn_k.bias");
        if (!q && !k) return r -> r;
        int heads = q ? c.numHeads() : c.numKvHeads(), rows = heads * c.headDim();
        return r -> TensorNames.ggufRowOf(r, rows, heads);
    }

    /** A plain tensor in its own dtype (F32/F16/BF16), or decoded to F32 when it is a ggml block type; rows reordered by {@code rows}. */
    private static void addPlain(SafetensorsWriter w, String hfName, TensorData t, IntUnaryOperator rows) {
        long[] g = t.shape();
        long[] shape = new long[g.length];
        for (int i = 0; i < g.length; i++) shape[i] = g[g.length - 1 - i];
        boolean plain = t.type() == GgmlType.F32 || t.type() == GgmlType.F16 || t.type() == GgmlType.BF16;
        if (plain && !isPermuted(rows, t)) {
            w.add(hfName, t);
            return;
        }
        int n = (int) t.rowLength(), r = (int) t.rows();
        if (t.shape().length == 1 || (r == 1)) {
            // a bias of a permuted Q/K: one value per row
            float[] v = new float[n];
            WeightMatrix.of(t).dequantizeRow(0, v, 0);
            float[] o = new float[n];
            for (int i = 0; i < n; i++) o[i] = v[rows.applyAsInt(i)];
            w.add(hfName, shape, o);
            return;
        }
        WeightMatrix m = WeightMatrix.of(t);
        float[] all = new float[Math.multiplyExact(n, r)];
        for (int i = 0; i < r; i++) m.dequantizeRow(rows.applyAsInt(i), all, i * n);
        w.add(hfName, shape, all);
    }

    /**
     * What a calibrated method used: the calibration record (our key {@code modelopt_calibration},
     * which other readers ignore) and GPTQ's damp. {@code desc_act} stays false: act-order with
     * static groups stores contiguous groups, which is what the flag tells a reader.
     */
    private static void recordCalibration(ModelSource source, Map<String, Object> qc) {
        Object calib = source.metadata() == null ? null : source.metadata().get(io.modelopt.quantization.calib.CalibratedModelQuantizer.CALIBRATION_KEY);
        if (calib != null) qc.put(io.modelopt.quantization.calib.CalibratedModelQuantizer.HF_CALIBRATION_KEY, calib.toString());
        if (source instanceof io.modelopt.quantization.model.QuantizedModelSource q && q.spec() != null && q.spec().method().contains("gptq")
                && qc.containsKey("damp_percent")) {
            qc.put("damp_percent", q.spec().damp());
        }
    }

    private static boolean isPermuted(IntUnaryOperator rows, TensorData t) {
        long n = t.shape().length == 1 ? t.rowLength() : t.rows();
        for (int i = 0; i < n; i++) if (rows.applyAsInt(i) != i) return true;
        return false;
    }

    private static Map<String, Object> baseConfig(ModelSource source) throws IOException {
        Path dir = source.path();
        if (dir != null && Files.isRegularFile(dir.resolve("config.json"))) {
            return new LinkedHashMap<>(Json.parseObject(Files.readString(dir.resolve("config.json"), StandardCharsets.UTF_8)));
        }
        if (source.metadata() != null && source.metadata().containsKey("architectures")) return new LinkedHashMap<>(source.metadata());
        return configOf(source.config());
    }

    /** config.json as transformers' config classes write it, from the engine's config (for a GGUF source). */
    static Map<String, Object> configOf(ModelConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        String arch = switch (c.architecture()) {
            case LLAMA -> "Llama";
            case MISTRAL -> "Mistral";
            case QWEN2 -> "Qwen2";
        };
        m.put("architectures", List.of(arch + "ForCausalLM"));
        m.put("model_type", arch.toLowerCase(java.util.Locale.ROOT));
        m.put("hidden_size", c.hiddenSize());
        m.put("intermediate_size", c.intermediateSize());
        m.put("num_hidden_layers", c.numLayers());
        m.put("num_attention_heads", c.numHeads());
        m.put("num_key_value_heads", c.numKvHeads());
        m.put("head_dim", c.headDim());
        m.put("vocab_size", c.vocabSize());
        m.put("max_position_embeddings", c.contextLength());
        m.put("rms_norm_eps", Double.parseDouble(Float.toString(c.rmsNormEps())));
        m.put("rope_theta", Double.parseDouble(Float.toString(c.ropeTheta())));
        if (c.ropeScaling() != null) {
            Map<String, Object> rs = new LinkedHashMap<>();
            rs.put("rope_type", c.ropeScaling().type());
            rs.put("factor", c.ropeScaling().factor());
            if ("llama3".equals(c.ropeScaling().type())) {
                rs.put("low_freq_factor", c.ropeScaling().lowFreqFactor());
                rs.put("high_freq_factor", c.ropeScaling().highFreqFactor());
                rs.put("original_max_position_embeddings", c.ropeScaling().originalMaxPositions());
            }
            m.put("rope_scaling", rs);
        }
        m.put("hidden_act", "silu");
        m.put("attention_bias", c.attentionBias());
        m.put("bos_token_id", c.bosTokenId());
        int[] eos = c.eosTokenIds();
        m.put("eos_token_id", eos.length == 1 ? (Object) eos[0] : java.util.Arrays.stream(eos).boxed().toList());
        m.put("tie_word_embeddings", c.tieWordEmbeddings());
        m.put("torch_dtype", "float16");
        return m;
    }

    private static void copySideFiles(ModelSource source, Path tmp) throws IOException {
        Path dir = source.path();
        if (dir == null || !Files.isDirectory(dir)) {
            log.warn("{}: not an HF directory; tokenizer files are not written (core cannot write tokenizer.json from a GGUF vocabulary)", dir);
            return;
        }
        for (String f : SIDE_FILES) {
            Path src = dir.resolve(f);
            if (Files.isRegularFile(src)) Files.copy(src, tmp.resolve(f));
        }
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) Files.delete(x);
        }
    }

    /** Adds an in-memory tensor. */
    static void add(SafetensorsWriter w, String name, SafetensorsDType dtype, MemorySegment data, long... shape) {
        w.add(name, dtype, shape, data);
    }
}
