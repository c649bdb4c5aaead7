package io.modelopt.core.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a {@link ModelConfig} from a GGUF file's metadata, with the keys and defaults llama.cpp's
 * {@code llama_model::load_hparams} uses for the llama and qwen2 architectures
 * ({@code {arch}.embedding_length}, {@code {arch}.attention.head_count}, ...).
 */
public final class GgufConfigReader {
    private static final Logger LOG = LoggerFactory.getLogger(GgufConfigReader.class);

    /** llama.cpp's {@code llama_ftype} names by {@code general.file_type}; null entries are retired ids. */
    private static final String[] FILE_TYPES = {
            "float32", "float16", "Q4_0", "Q4_1", null, null, null, "Q8_0", "Q5_0", "Q5_1", "Q2_K",
            "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ2_XXS", "IQ2_XS",
            "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ3_M", "IQ2_S", "IQ2_M", "IQ4_XS",
            "IQ1_M", "bfloat16", null, null, null, "TQ1_0", "TQ2_0", "MXFP4_MOE"};

    private GgufConfigReader() {}

    public static ModelConfig read(GgufFile f) {
        String arch = f.getString("general.architecture");
        Architecture architecture = switch (arch) {
            case "llama" -> Architecture.LLAMA;
            case "qwen2" -> Architecture.QWEN2;
            default -> throw new ModelFormatException(f.path(), "unsupported architecture '" + arch + "' (general.architecture); supported: llama, qwen2");
        };
        String p = arch + ".";
        int hidden = f.getInt(p + "embedding_length");
        int layers = f.getInt(p + "block_count");
        int heads = f.getInt(p + "attention.head_count");
        int kvHeads = f.findInt(p + "attention.head_count_kv").orElse(heads);
        int ffn = f.getInt(p + "feed_forward_length");
        int ctx = f.getInt(p + "context_length");
        float eps = f.getFloat(p + "attention.layer_norm_rms_epsilon");
        float theta = f.findFloat(p + "rope.freq_base").orElse(10000f);
        if (heads <= 0) throw new ModelFormatException(f.path(), p + "attention.head_count is " + heads);
        int headDim = f.findInt(p + "attention.key_length").orElse(hidden / heads);
        Optional<Integer> valueLength = f.findInt(p + "attention.value_length");
        if (valueLength.isPresent() && valueLength.get() != headDim) {
            throw new ModelFormatException(f.path(), "unsupported: " + p + "attention.value_length " + valueLength.get()
                    + " differs from the key length " + headDim);
        }
        Optional<Integer> ropeDims = f.findInt(p + "rope.dimension_count");
        if (ropeDims.isPresent() && ropeDims.get() != headDim) {
            throw new ModelFormatException(f.path(), "unsupported: partial rotary embedding (" + p + "rope.dimension_count "
                    + ropeDims.get() + " != head dim " + headDim + ")");
        }

        Map<String, TensorData> tensors = f.tensors();
        int vocab = vocabSize(f, p, hidden);

        ModelConfig.Builder b = ModelConfig.builder()
                .architecture(architecture)
                .hiddenSize(hidden).numLayers(layers).numHeads(heads).numKvHeads(kvHeads).headDim(headDim)
                .intermediateSize(ffn).vocabSize(vocab).contextLength(ctx)
                .rmsNormEps(eps).ropeTheta(theta).ropeScaling(ropeScaling(f, p))
                .ropeConvention(architecture == Architecture.QWEN2 ? RopeConvention.ROTATE_HALF : RopeConvention.ADJACENT_PAIRS)
                .tieWordEmbeddings(!tensors.containsKey("output.weight"))
                .attentionBias(tensors.containsKey("blk.0.attn_q.bias"))
                .bosTokenId(tokenId(f, "tokenizer.ggml.bos_token_id"))
                .eosTokenIds(eosIds(f))
                .dtype(dtype(f));
        if (tensors.containsKey("rope_freqs.weight")) {
            LOG.warn("{}: has rope_freqs.weight (per-dimension RoPE frequency factors, e.g. Llama 3.1 scaling); "
                    + "it is exposed as a tensor, the config carries no scaling for it", f.path());
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(f.path(), e.getMessage(), e);
        }
    }

    /** Tokens in the vocabulary; must match token_embd.weight's rows as llama.cpp requires. */
    private static int vocabSize(GgufFile f, String p, int hidden) {
        Optional<GgufValue.Array> tokens = f.findArray("tokenizer.ggml.tokens");
        Optional<TensorData> embd = f.findTensor("token_embd.weight");
        int vocab;
        if (tokens.isPresent()) {
            vocab = tokens.get().size();
        } else if (f.contains(p + "vocab_size")) {
            vocab = f.getInt(p + "vocab_size");
        } else if (embd.isPresent()) {
            vocab = (int) embd.get().dim(1);
        } else {
            throw new ModelFormatException(f.path(), "missing metadata key 'tokenizer.ggml.tokens' (and no " + p + "vocab_size) to size the vocabulary");
        }
        if (embd.isPresent()) {
            TensorData e = embd.get();
            if (e.dim(0) != hidden || e.dim(1) != vocab) {
                throw new ModelFormatException(f.path(), "token_embd.weight has shape [" + e.dim(0) + ", " + e.dim(1) + "], expected ["
                        + hidden + ", " + vocab + "] (embedding_length, vocabulary size)");
            }
        }
        return vocab;
    }

    private static RopeScaling ropeScaling(GgufFile f, String p) {
        Optional<String> type = f.findString(p + "rope.scaling.type");
        if (type.isEmpty()) {
            // older converters wrote only the linear factor
            return f.findFloat(p + "rope.scale_linear").filter(x -> x != 0f && x != 1f).map(RopeScaling::linear).orElse(null);
        }
        return switch (type.get()) {
            case "none" -> null;
            case "linear" -> {
                float factor = f.getFloat(p + "rope.scaling.factor");
                yield factor == 0f || factor == 1f ? null : RopeScaling.linear(factor);
            }
            case "llama3" -> new RopeScaling("llama3", f.getFloat(p + "rope.scaling.factor"),
                    f.getFloat(p + "rope.scaling.low_freq_factor"), f.getFloat(p + "rope.scaling.high_freq_factor"),
                    f.getInt(p + "rope.scaling.original_context_length"));
            default -> throw new ModelFormatException(f.path(), "unsupported RoPE scaling type '" + type.get() + "' (" + p + "rope.scaling.type)");
        };
    }

    /** A token id key; absent → -1. uint32 0xFFFFFFFF (llama.cpp's "no token" in gguf-py files) also → -1. */
    static int tokenId(GgufFile f, String key) {
        Optional<GgufValue> v = f.find(key);
        if (v.isEmpty()) return -1;
        // raw bits: uint64 0xFFFF_FFFF_FFFF_FFFF is -1 here
        if (v.get() instanceof GgufValue.Int i && i.value() == -1) return -1;
        long x = f.getLong(key);
        if (x == 0xFFFF_FFFFL) return -1;
        if (x < 0 || x > Integer.MAX_VALUE) throw new ModelFormatException(f.path(), "metadata key '" + key + "' = " + x + " is not a token id");
        return (int) x;
    }

    /** EOS plus end-of-turn / end-of-message tokens, which also end generation in llama.cpp. */
    private static int[] eosIds(GgufFile f) {
        Set<Integer> ids = new LinkedHashSet<>();
        for (String k : new String[] {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
            int id = tokenId(f, k);
            if (id >= 0) ids.add(id);
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** {@code general.file_type} as llama.cpp names it, or inferred from the matrices' types when absent. */
    static String dtype(GgufFile f) {
        Optional<Long> ft = f.findLong("general.file_type");
        if (ft.isPresent()) {
            long id = ft.get();
            String name = id >= 0 && id < FILE_TYPES.length ? FILE_TYPES[(int) id] : null;
            return name != null ? name : "file_type " + id;
        }
        Map<GgmlType, Integer> counts = new EnumMap<>(GgmlType.class);
        for (GgufTensorInfo t : f.tensorInfos()) if (t.nDims() >= 2) counts.merge(t.type(), 1, Integer::sum);
        GgmlType main = counts.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(GgmlType.F32);
        return switch (main) {
            case F32 -> "float32";
            case F16 -> "float16";
            case BF16 -> "bfloat16";
            default -> main.name();
        };
    }
}
