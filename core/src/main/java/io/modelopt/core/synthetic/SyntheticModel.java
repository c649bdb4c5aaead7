package io.modelopt.core.synthetic;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.gguf.GgufWriter;
import io.modelopt.core.json.Json;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.core.tensor.GgmlType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A synthetic Llama model: a {@link SyntheticSpec} shape, random weights of a seed
 * ({@link SyntheticWeights}) and a tensor type, written as a GGUF file or a Hugging Face directory
 * as llama.cpp's tools would have made them from a real checkpoint of that shape:
 * <ul>
 *   <li><b>GGUF</b> F32/F16: as {@code convert_hf_to_gguf.py --outtype f32|f16} (its metadata keys
 *       and order, its tensor order, norms F32). Q8_0/Q4_0: as {@code llama-quantize --pure} of that
 *       (every matrix in the type, {@code token_embd} and {@code output} included; norms F32; the
 *       quantizer's tensor order; {@code general.file_type} moved to the end as it leaves it).</li>
 *   <li><b>HF</b> F32/F16: {@code config.json} (LlamaForCausalLM), {@code model.safetensors} (every
 *       tensor in the dtype, Q/K rows in HF rotate_half order), {@code tokenizer.json},
 *       {@code tokenizer_config.json}. Converting it with convert_hf_to_gguf.py gives the GGUF of
 *       the same seed: both are views of one canonical model.</li>
 * </ul>
 * Files are streamed tensor by tensor (see {@link TensorStreamer}); nothing model-sized is held in
 * memory. The output is a pure function of (spec, type, seed, {@link #FORMAT_VERSION}).
 */
public final class SyntheticModel {
    private static final Logger LOG = LoggerFactory.getLogger(SyntheticModel.class);

    /** Bumped whenever the bytes a (spec, type, seed) produces change, so cached files are not reused. */
    public static final int FORMAT_VERSION = 1;
    /** The seed used when none is given. */
    public static final long DEFAULT_SEED = 42;
    /** Types a synthetic GGUF can hold. */
    public static final Set<GgmlType> GGUF_TYPES = Set.copyOf(EnumSet.of(GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.Q4_0));
    /** Types a synthetic HF checkpoint can hold. */
    public static final Set<GgmlType> HF_TYPES = Set.copyOf(EnumSet.of(GgmlType.F32, GgmlType.F16));

    private final SyntheticSpec spec;
    private final GgmlType type;
    private final long seed;
    private final SyntheticWeights weights;

    private SyntheticModel(SyntheticSpec spec, GgmlType type, long seed) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.type = Objects.requireNonNull(type, "type");
        if (!GGUF_TYPES.contains(type)) throw new IllegalArgumentException("synthetic models are F32, F16, Q8_0 or Q4_0, not " + type);
        this.seed = seed;
        this.weights = new SyntheticWeights(seed, spec.weightStd());
    }

    public static SyntheticModel of(SyntheticSpec spec, GgmlType type, long seed) {
        return new SyntheticModel(spec, type, seed);
    }

    /** Parses a type name as the CLI takes it: f32, f16, q8_0, q4_0 (case-insensitive). */
    public static GgmlType parseType(String name) {
        String n = name.toUpperCase(Locale.ROOT);
        for (GgmlType t : GGUF_TYPES) if (t.name().equals(n)) return t;
        throw new IllegalArgumentException("unknown synthetic weight type '" + name + "' (f32, f16, q8_0, q4_0)");
    }

    public SyntheticSpec spec() { return spec; }

    public GgmlType type() { return type; }

    public long seed() { return seed; }

    /** The type a tensor is stored in: norms F32 (GGUF) — as both converter and quantizer keep 1-D tensors — else {@link #type()}. */
    public GgmlType ggufTypeOf(SyntheticTensor t) { return t.norm() ? GgmlType.F32 : type; }

    /** Sum of the GGUF tensor data bytes (without alignment padding). */
    public long ggufTensorBytes() {
        long sum = 0;
        for (SyntheticTensor t : SyntheticTensor.convertOrder(spec)) sum += ggufTypeOf(t).bytesFor(t.elementCount());
        return sum;
    }

    /**
     * The cache name: {@code <spec>-<type>-s<seed>-v<version>} (+ {@code -<fingerprint>} when the spec
     * is not exactly its named preset), then {@code .gguf} or {@code -hf} for a directory.
     */
    public String fileName(SyntheticFormat format) {
        String base = spec.name() + (spec.isPreset() ? "" : "-" + spec.fingerprint()) + "-" + type.name().toLowerCase(Locale.ROOT)
                + "-s" + seed + "-v" + FORMAT_VERSION;
        return format == SyntheticFormat.GGUF ? base + ".gguf" : base + "-hf";
    }

    /** Writes {@code path} in {@code format} (a file for GGUF, a directory for HF). */
    public void write(SyntheticFormat format, Path path, ProgressListener progress) {
        switch (format) {
            case GGUF -> writeGguf(path, progress);
            case HF -> writeHuggingFace(path, progress);
        }
    }

    // ---------------------------------------------------------------- GGUF

    /** Writes the GGUF file (through a temporary file moved into place). */
    public void writeGguf(Path file, ProgressListener progress) {
        long t0 = System.nanoTime();
        ggufWriter(progress).write(file);
        LOG.info("wrote synthetic {} {} (seed {}) to {} in {} ms", spec.name(), type, seed, file, (System.nanoTime() - t0) / 1_000_000);
    }

    /** The writer, its tensors generated on demand while it writes. */
    public GgufWriter ggufWriter(ProgressListener progress) {
        Objects.requireNonNull(progress, "progress");
        GgufWriter w = new GgufWriter();
        putMetadata(w);
        boolean quantized = type.isQuantized();
        List<SyntheticTensor> order = quantized ? SyntheticTensor.quantizeOrder(spec) : SyntheticTensor.convertOrder(spec);
        String stage = "synthesize " + spec.name() + " " + type.name().toLowerCase(Locale.ROOT);
        long total = ggufTensorBytes();
        // one streamer (one chunk buffer) for the whole file; it restarts its count at the first tensor
        TensorStreamer streamer = new TensorStreamer(bytes -> progress.onProgress(stage, bytes, total));
        for (SyntheticTensor t : order) {
            GgmlType tt = ggufTypeOf(t);
            long key = weights.tensorKey(t.name());
            boolean first = t == order.getFirst();
            w.addTensor(t.name(), tt, t.ggmlShape(), out -> {
                if (first) streamer.restart();
                streamer.write(tt, t.ne0(), t.rows(), rowSource(t, key, false), out);
            });
        }
        return w;
    }

    private void putMetadata(GgufWriter w) {
        SyntheticVocabulary vocab = new SyntheticVocabulary(spec.vocabSize());
        String a = "llama.";
        w.putString("general.architecture", "llama");
        w.putString("general.type", "model");
        w.putString("general.name", "synthetic-" + spec.name());
        w.putString("general.size_label", sizeLabel(spec.parameterCount()));
        w.putUInt32(a + "block_count", spec.numLayers());
        w.putUInt32(a + "context_length", spec.contextLength());
        w.putUInt32(a + "embedding_length", spec.hiddenSize());
        w.putUInt32(a + "feed_forward_length", spec.intermediateSize());
        w.putUInt32(a + "attention.head_count", spec.numHeads());
        w.putUInt32(a + "attention.head_count_kv", spec.numKvHeads());
        w.putFloat32(a + "rope.freq_base", spec.ropeTheta());
        w.putFloat32(a + "attention.layer_norm_rms_epsilon", spec.rmsNormEps());
        w.putUInt32("general.file_type", fileType(type));
        w.putUInt32(a + "vocab_size", spec.vocabSize());
        w.putUInt32(a + "rope.dimension_count", spec.headDim());
        w.putString("tokenizer.ggml.model", "llama");
        w.putString("tokenizer.ggml.pre", "default");
        w.putStringArray("tokenizer.ggml.tokens", vocab.tokens());
        w.putFloat32Array("tokenizer.ggml.scores", vocab.scores());
        w.putInt32Array("tokenizer.ggml.token_type", vocab.tokenTypes());
        w.putUInt32("tokenizer.ggml.bos_token_id", SyntheticVocabulary.BOS);
        w.putUInt32("tokenizer.ggml.eos_token_id", SyntheticVocabulary.EOS);
        w.putUInt32("tokenizer.ggml.unknown_token_id", SyntheticVocabulary.UNK);
        w.putBool("tokenizer.ggml.add_bos_token", true);
        w.putBool("tokenizer.ggml.add_eos_token", false);
        w.putUInt32("general.quantization_version", 2);
        if (type.isQuantized()) {
            // llama-quantize sets the file type with gguf_set_val_u32, which removes the key and appends it
            w.remove("general.file_type");
            w.putUInt32("general.file_type", fileType(type));
        }
    }

    /** llama.cpp's {@code llama_ftype} of an all-{@code type} model ({@code LLAMA_FTYPE_ALL_F32}, {@code MOSTLY_F16}, ...). */
    static int fileType(GgmlType type) {
        return switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q4_0 -> 2;
            case Q8_0 -> 7;
            default -> throw new IllegalArgumentException("no file type for " + type);
        };
    }

    /** gguf-py's {@code model_weight_count_rounded_notation}: "134M", "1.1B", "5.2M" (at least two digits). */
    static String sizeLabel(long params) {
        double scaled;
        String suffix;
        if (params > 1e12) { scaled = params * 1e-12; suffix = "T"; }
        else if (params > 1e9) { scaled = params * 1e-9; suffix = "B"; }
        else if (params > 1e6) { scaled = params * 1e-6; suffix = "M"; }
        else { scaled = params * 1e-3; suffix = "K"; }
        int digits = Long.toString(Math.round(scaled)).replaceFirst("^0+", "").length();
        int fix = Math.max(2 - digits, 0);
        return String.format(Locale.ROOT, "%." + fix + "f%s", scaled, suffix);
    }

    // ---------------------------------------------------------------- Hugging Face

    /**
     * Writes an HF model directory (created if needed; existing files of the same names are
     * replaced): config.json, model.safetensors, tokenizer.json, tokenizer_config.json.
     */
    public void writeHuggingFace(Path dir, ProgressListener progress) {
        if (!HF_TYPES.contains(type)) throw new IllegalArgumentException("an HF checkpoint is F32 or F16, not " + type + " (quantized types are GGUF only)");
        long t0 = System.nanoTime();
        SafetensorsDType dtype = type == GgmlType.F16 ? SafetensorsDType.F16 : SafetensorsDType.F32;
        SyntheticVocabulary vocab = new SyntheticVocabulary(spec.vocabSize());
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("config.json"), hfConfigJson() + "\n", StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("tokenizer.json"), vocab.tokenizerJson(), StandardCharsets.UTF_8);
            Files.writeString(dir.resolve("tokenizer_config.json"), vocab.tokenizerConfigJson(spec.contextLength()) + "\n", StandardCharsets.UTF_8);
            SafetensorsWriter sw = new SafetensorsWriter().metadata("format", "pt");
            String stage = "synthesize " + spec.name() + " hf " + type.name().toLowerCase(Locale.ROOT);
            long total = 0;
            for (SyntheticTensor t : SyntheticTensor.convertOrder(spec)) total += type.bytesFor(t.elementCount());
            long grand = total;
            TensorStreamer streamer = new TensorStreamer(b -> progress.onProgress(stage, b, grand));
            for (SyntheticTensor t : SyntheticTensor.convertOrder(spec)) {
                long key = weights.tensorKey(t.name());
                sw.add(t.hfName(), dtype, t.torchShape(), type.bytesFor(t.elementCount()),
                        out -> streamer.write(type, t.ne0(), t.rows(), rowSource(t, key, true), out));
            }
            sw.write(dir.resolve("model.safetensors"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write synthetic HF model to " + dir, e);
        }
        LOG.info("wrote synthetic {} {} HF (seed {}) to {} in {} ms", spec.name(), type, seed, dir, (System.nanoTime() - t0) / 1_000_000);
    }

    /** config.json as transformers' LlamaConfig writes it (no head_dim: it is hidden / heads). */
    public String hfConfigJson() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("architectures", List.of("LlamaForCausalLM"));
        c.put("model_type", "llama");
        c.put("hidden_size", spec.hiddenSize());
        c.put("intermediate_size", spec.intermediateSize());
        c.put("num_hidden_layers", spec.numLayers());
        c.put("num_attention_heads", spec.numHeads());
        c.put("num_key_value_heads", spec.numKvHeads());
        c.put("vocab_size", spec.vocabSize());
        c.put("max_position_embeddings", spec.contextLength());
        c.put("rms_norm_eps", Double.parseDouble(Float.toString(spec.rmsNormEps())));
        c.put("rope_theta", Double.parseDouble(Float.toString(spec.ropeTheta())));
        c.put("rope_scaling", null);
        c.put("hidden_act", "silu");
        c.put("attention_bias", false);
        c.put("mlp_bias", false);
        c.put("attention_dropout", 0.0);
        c.put("initializer_range", Double.parseDouble(Float.toString(spec.weightStd())));
        c.put("bos_token_id", SyntheticVocabulary.BOS);
        c.put("eos_token_id", SyntheticVocabulary.EOS);
        c.put("tie_word_embeddings", spec.tiedEmbeddings());
        c.put("torch_dtype", type == GgmlType.F16 ? "float16" : "float32");
        c.put("use_cache", true);
        c.put("pretraining_tp", 1);
        return Json.writePretty(c);
    }

    // ---------------------------------------------------------------- values

    /**
     * Row {@code r} of a tensor: norms are ones; matrices are elements {@code row × ne0 ..} of the
     * canonical tensor's random stream, where for HF Q/K the canonical row is the one HF's
     * rotate_half order puts at {@code r}.
     */
    private TensorStreamer.RowSource rowSource(SyntheticTensor t, long key, boolean hfOrder) {
        if (t.norm()) return (row, dst) -> Arrays.fill(dst, 0, t.ne0(), 1.0f);
        return (row, dst) -> {
            int canonical = hfOrder ? t.canonicalRowOfHfRow(row) : row;
            weights.fill(key, (long) canonical * t.ne0(), dst, 0, t.ne0());
        };
    }

    /** Element {@code index} (ggml row-major) of the canonical tensor {@code name}: for tests and checks. */
    public float canonicalValue(SyntheticTensor t, long index) {
        return t.norm() ? 1.0f : weights.value(weights.tensorKey(t.name()), index);
    }

    @Override public String toString() {
        return "SyntheticModel[" + spec.name() + ", " + type + ", seed " + seed + "]";
    }
}
