package io.modelopt.core.hf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.safetensors.SafetensorsCheckpoint;
import io.modelopt.core.safetensors.SafetensorsIndex;
import io.modelopt.core.safetensors.SafetensorsTensor;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.core.tokenizer.Tokenizers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hugging Face model directory as a {@link ModelSource}: {@code config.json} (+ optional
 * {@code generation_config.json}, see {@link HfConfig}), {@code model.safetensors} or a sharded
 * checkpoint ({@code model.safetensors.index.json}), and the tokenizer files.
 *
 * <p>Tensors are zero-copy views of the mapped files, renamed to canonical GGUF names with
 * {@link TensorNames} and with shapes reversed to ggml order; Q/K stay in HF rotate_half order
 * ({@link io.modelopt.core.model.RopeConvention#ROTATE_HALF} in the config). Weights must be F32, F16
 * or BF16, or of a dtype that a registered {@link io.modelopt.core.model.WeightBinder} claims (e.g.
 * INT8 with a scale tensor beside it); a known weight of another dtype is rejected at {@link #open}. Tensors whose names are not
 * in the table are kept under their HF name when ggml has their dtype, else skipped with a warning.
 * Every expected weight is checked for presence and shape against the config, so a mismatched
 * checkpoint fails here, with the tensor named, instead of in the engine.
 *
 * <p>Tied embeddings: when {@code tie_word_embeddings} is set and there is no {@code lm_head.weight},
 * there is no {@code output.weight} entry (the engine uses {@code token_embd.weight}); a
 * {@code lm_head.weight} stored anyway is kept. Untied without {@code lm_head.weight} is an error.
 *
 * <p>The tokenizer is built on the first {@link #tokenizer()} call (so the weights load even where
 * the tokenizer files cannot be read) and cached. {@link #metadata()} is config.json's entries.
 */
public final class HfModelSource implements ModelSource {
    private static final Logger log = LoggerFactory.getLogger(HfModelSource.class);

    private final Path dir;
    private final HfConfig config;
    private final SafetensorsCheckpoint checkpoint;
    private final Map<String, TensorData> tensors;
    private final Map<String, String> fileNames;
    private volatile Tokenizer tokenizer;

    private HfModelSource(Path dir, HfConfig config, SafetensorsCheckpoint checkpoint, Map<String, TensorData> tensors, Map<String, String> fileNames) {
        this.dir = dir;
        this.config = config;
        this.checkpoint = checkpoint;
        this.tensors = Collections.unmodifiableMap(tensors);
        this.fileNames = fileNames;
    }

    /**
     * Opens a model directory.
     *
     * @throws ModelFormatException naming the directory when config.json or the safetensors files are
     *                              missing, or the file and key/tensor when anything is malformed
     */
    public static HfModelSource open(Path dir) {
        if (!Files.isDirectory(dir)) throw new ModelFormatException(dir, "not a directory");
        HfConfig config = HfConfig.load(dir);
        if (!Files.isRegularFile(dir.resolve(SafetensorsCheckpoint.SINGLE_FILE)) && !Files.isRegularFile(dir.resolve(SafetensorsIndex.FILE_NAME))) {
            throw new ModelFormatException(dir, "no weights: neither " + SafetensorsCheckpoint.SINGLE_FILE + " nor "
                    + SafetensorsIndex.FILE_NAME + " in this directory");
        }
        SafetensorsCheckpoint checkpoint = SafetensorsCheckpoint.open(dir);
        try {
            Map<String, TensorData> tensors = new LinkedHashMap<>();
            Map<String, String> fileNames = new LinkedHashMap<>();
            for (SafetensorsTensor t : checkpoint.tensors().values()) {
                Path file = checkpoint.fileOf(t.name()).orElse(dir);
                String canonical = TensorNames.toGguf(t.name()).orElse(null);
                if (canonical == null) {
                    if (t.dtype().ggmlType().isEmpty()) {
                        log.warn("{}: skipping tensor '{}' of dtype {} (not a known weight; ggml has no such type)", file, t.name(), t.dtype());
                        continue;
                    }
                    log.debug("{}: keeping unknown tensor '{}' under its own name", file, t.name());
                    canonical = t.name();
                } else if (!t.dtype().isFloatWeight() && !claimed(canonical, t)) {
                    throw new ModelFormatException(file, "tensor '" + t.name() + "' has dtype " + t.dtype()
                            + "; weights must be F32, F16 or BF16, or of a dtype a registered weight binder reads");
                }
                if (tensors.containsKey(canonical)) throw new ModelFormatException(file, "two tensors map to '" + canonical + "' (second: '" + t.name() + "')");
                tensors.put(canonical, t.toTensorData(canonical));
                fileNames.put(canonical, t.name());
            }
            HfModelSource source = new HfModelSource(dir, config, checkpoint, tensors, fileNames);
            new WeightCheck(config.modelConfig(), checkpoint, source).verify(tensors, fileNames);
            log.info("opened HF model {}: {}, {} tensors", dir, config.modelConfig().architecture(), tensors.size());
            return source;
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
    }

    @Override public Path path() { return dir; }

    @Override public String format() { return "huggingface"; }

    @Override public ModelConfig config() { return config.modelConfig(); }

    /** config.json + generation_config.json as read. */
    public HfConfig hfConfig() { return config; }

    public GenerationConfig generationConfig() { return config.generation(); }

    /** The safetensors files behind the tensors. */
    public SafetensorsCheckpoint checkpoint() { return checkpoint; }

    /** Built from the directory's tokenizer files on first use, then cached. */
    @Override public Tokenizer tokenizer() {
        Tokenizer t = tokenizer;
        if (t == null) {
            synchronized (this) {
                t = tokenizer;
                if (t == null) tokenizer = t = Tokenizers.fromHuggingFace(dir);
            }
        }
        return t;
    }

    @Override public Map<String, TensorData> tensors() { return tensors; }

    @Override public Map<String, Object> metadata() { return config.raw(); }

    /** The HF name of a canonical tensor name as stored here; names not stored map through {@link TensorNames#toHfOrSelf}. */
    @Override public String fileTensorName(String canonicalName) {
        String n = fileNames.get(canonicalName);
        return n != null ? n : TensorNames.toHfOrSelf(canonicalName);
    }

    @Override public void close() { checkpoint.close(); }

    @Override public String toString() { return "HfModelSource[" + dir + ", " + config.modelConfig().architecture() + ", " + tensors.size() + " tensors]"; }

    /**
     * Presence and ggml-order shape of every weight the config implies. A linear weight without a
     * tensor of its own name may be stored as several tensors that a registered
     * {@link io.modelopt.core.model.WeightBinder} binds (AWQ's {@code qweight}/{@code qzeros}/{@code scales},
     * ...): it is bound here once, so a quantized checkpoint that does not agree with the config
     * fails at open, naming the tensor, as a plain one does.
     */
    private record WeightCheck(ModelConfig c, SafetensorsCheckpoint checkpoint, HfModelSource source) {
        void verify(Map<String, TensorData> tensors, Map<String, String> fileNames) {
            long h = c.hiddenSize(), q = c.qDim(), kv = c.kvDim(), ff = c.intermediateSize(), v = c.vocabSize();
            expect(tensors, fileNames, "token_embd.weight", true, h, v);
            expect(tensors, fileNames, "output_norm.weight", true, h);
            expect(tensors, fileNames, "output.weight", !c.tieWordEmbeddings(), h, v);
            for (int i = 0; i < c.numLayers(); i++) {
                String p = "blk." + i + ".";
                expect(tensors, fileNames, p + "attn_norm.weight", true, h);
                expect(tensors, fileNames, p + "attn_q.weight", true, h, q);
                expect(tensors, fileNames, p + "attn_k.weight", true, h, kv);
                expect(tensors, fileNames, p + "attn_v.weight", true, h, kv);
                expect(tensors, fileNames, p + "attn_output.weight", true, q, h);
                expect(tensors, fileNames, p + "attn_q.bias", c.attentionBias(), q);
                expect(tensors, fileNames, p + "attn_k.bias", c.attentionBias(), kv);
                expect(tensors, fileNames, p + "attn_v.bias", c.attentionBias(), kv);
                expect(tensors, fileNames, p + "ffn_norm.weight", true, h);
                expect(tensors, fileNames, p + "ffn_gate.weight", true, h, ff);
                expect(tensors, fileNames, p + "ffn_up.weight", true, h, ff);
                expect(tensors, fileNames, p + "ffn_down.weight", true, ff, h);
            }
        }

        private void expect(Map<String, TensorData> tensors, Map<String, String> fileNames, String name, boolean required, long... shape) {
            TensorData t = tensors.get(name);
            if (t == null && shape.length == 2) {
                io.modelopt.core.kernel.WeightMatrix bound = io.modelopt.core.model.WeightBinders.bind(source, name);
                if (bound != null) {
                    if (bound.cols() != shape[0] || bound.rows() != shape[1]) {
                        throw new ModelFormatException(checkpoint.path(), "weight '" + TensorNames.toHfOrSelf(name) + "' (" + name + ") binds as " + bound.rows()
                                + " rows of " + bound.cols() + " columns but the config implies " + shape[1] + " rows of " + shape[0]);
                    }
                    return;
                }
            }
            if (t == null) {
                if (required) {
                    throw new ModelFormatException(checkpoint.path(), "missing tensor '" + TensorNames.toHfOrSelf(name) + "' (" + name + ") required by the config");
                }
                return;
            }
            if (!Arrays.equals(t.shape(), shape)) {
                String hfName = fileNames.get(name);
                throw new ModelFormatException(checkpoint.fileOf(hfName).orElse(checkpoint.path()), "tensor '" + hfName + "' has ggml shape "
                        + Arrays.toString(t.shape()) + " but the config implies " + Arrays.toString(shape));
            }
        }
    }

    /** Whether a registered weight binder reads this tensor (a dtype the plain formats do not take). */
    private static boolean claimed(String canonical, SafetensorsTensor t) {
        return t.dtype().ggmlType().map(g -> io.modelopt.core.model.WeightBinders.claimed(canonical, g)).orElse(false);
    }
}
