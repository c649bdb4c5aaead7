package io.modelopt.core.hf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hugging Face model directory's {@code config.json} (plus {@code generation_config.json} when
 * present) read into a {@link ModelConfig}.
 *
 * <p>Supported: {@code LlamaForCausalLM}, {@code MistralForCausalLM}, {@code Qwen2ForCausalLM}
 * ({@code architectures[0]}; {@code model_type} when {@code architectures} is absent). Keys with
 * no sensible default — {@code hidden_size}, {@code intermediate_size}, {@code num_hidden_layers},
 * {@code num_attention_heads}, {@code vocab_size} — are required. The others take transformers'
 * defaults of the model's config class (LlamaConfig / MistralConfig / Qwen2Config, v4 and v5 agree):
 * <ul>
 *   <li>{@code num_key_value_heads}: the number of heads. (MistralConfig's class default is 8 and
 *       Qwen2Config's 32, but transformers always writes the key, so a file without it is
 *       hand-made; the head count is the safe reading.)</li>
 *   <li>{@code head_dim}: hidden_size / heads (then hidden_size must divide), or the explicit value.</li>
 *   <li>{@code max_position_embeddings}: 2048 (Llama), 131072 (Mistral), 32768 (Qwen2).</li>
 *   <li>{@code rms_norm_eps} 1e-6; {@code rope_theta} 10000 for all three (Qwen2Config's default is
 *       10000 too; real Qwen2 configs state 1e6 explicitly); {@code tie_word_embeddings} false.</li>
 *   <li>{@code bos_token_id}/{@code eos_token_id}: 1/2 (Llama, Mistral), none (Qwen2; -1 / empty).</li>
 *   <li>{@code attention_bias}: false for Llama/Mistral; Qwen2 always has Q/K/V biases (true).</li>
 * </ul>
 * RoPE: {@code rope_theta}/{@code rope_scaling} at the top level, or transformers v5's
 * {@code rope_parameters} object. Scaling types: none/"default", "linear" ({@code factor}),
 * "llama3" ({@code factor, low_freq_factor, high_freq_factor, original_max_position_embeddings});
 * any other type is rejected. The type key may be {@code rope_type} or the legacy {@code type}.
 * {@link RopeConvention#ROTATE_HALF} always: HF checkpoints keep Q/K in rotate_half order.
 * EOS ids are the union of config.json's and generation_config.json's.
 *
 * @param directory    the model directory
 * @param modelConfig  the engine's view of the model
 * @param generation   generation_config.json, or {@link GenerationConfig#NONE}
 * @param raw          every entry of config.json, in file order (unmodifiable)
 */
public record HfConfig(Path directory, ModelConfig modelConfig, GenerationConfig generation, Map<String, Object> raw) {
    private static final Logger log = LoggerFactory.getLogger(HfConfig.class);

    public static final String FILE_NAME = "config.json";

    public HfConfig {
        raw = Collections.unmodifiableMap(new LinkedHashMap<>(raw));
    }

    private record Defaults(int contextLength, int bos, int[] eos) {}

    private static Defaults defaults(Architecture a) {
        return switch (a) {
            case LLAMA -> new Defaults(2048, 1, new int[] {2});
            case MISTRAL -> new Defaults(4096 * 32, 1, new int[] {2});
            case QWEN2 -> new Defaults(32768, -1, new int[0]);
        };
    }

    /**
     * Reads {@code dir/config.json} and, when present, {@code dir/generation_config.json}.
     *
     * @throws ModelFormatException naming the directory when config.json is missing, or naming the file
     *                              and key when a key is missing, of the wrong type or unsupported
     */
    public static HfConfig load(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        if (!Files.isRegularFile(file)) throw new ModelFormatException(dir, "no " + FILE_NAME + " in this directory (expected " + file + ")");
        GenerationConfig generation = GenerationConfig.load(dir);
        JsonFields f = JsonFields.read(file);
        return new HfConfig(dir, toModelConfig(f, generation), generation, f.map());
    }

    /** Reads one config.json file without a generation config. */
    public static ModelConfig read(Path configFile) {
        return toModelConfig(JsonFields.read(configFile), GenerationConfig.NONE);
    }

    /** {@code model_type} of config.json ("llama", "mistral", "qwen2"), or empty. */
    public String modelType() {
        return raw.get("model_type") instanceof String s ? s : "";
    }

    static ModelConfig toModelConfig(JsonFields f, GenerationConfig generation) {
        Architecture arch = architecture(f);
        Defaults d = defaults(arch);
        int hidden = f.requireInt("hidden_size");
        int heads = f.requireInt("num_attention_heads");
        int layers = f.requireInt("num_hidden_layers");
        int intermediate = f.requireInt("intermediate_size");
        int vocab = f.requireInt("vocab_size");
        int kvHeads = f.optInt("num_key_value_heads", heads);
        int headDim;
        if (f.has("head_dim")) {
            headDim = f.optInt("head_dim", 0);
        } else {
            if (heads <= 0 || hidden % heads != 0) {
                throw new ModelFormatException(f.file(), "hidden_size " + hidden + " is not a multiple of num_attention_heads " + heads + " and 'head_dim' is absent");
            }
            headDim = hidden / heads;
        }
        String act = f.optString("hidden_act").orElse("silu");
        if (!act.equals("silu")) throw new ModelFormatException(f.file(), "unsupported 'hidden_act' \"" + act + "\" (only silu)");

        JsonFields ropeParams = f.optObject("rope_parameters").orElse(null);
        double theta = ropeParams != null && ropeParams.has("rope_theta") ? ropeParams.requireDouble("rope_theta") : f.optDouble("rope_theta", 10000.0);
        JsonFields scalingFields = f.optObject("rope_scaling").orElse(ropeParams);
        RopeScaling scaling = scalingFields == null ? null : ropeScaling(scalingFields);

        boolean bias = arch == Architecture.QWEN2 || f.optBool("attention_bias", false);
        boolean tied = f.optBool("tie_word_embeddings", false);
        int bos = f.optInt("bos_token_id").orElse(generation.bosTokenId() != null ? generation.bosTokenId() : d.bos());
        int[] eos = f.optIntOrList("eos_token_id").orElse(d.eos());
        Set<Integer> eosAll = new LinkedHashSet<>();
        for (int e : eos) eosAll.add(e);
        for (int e : generation.eosTokenIds()) eosAll.add(e);
        String dtype = f.optString("torch_dtype").or(() -> f.optString("dtype")).orElse("float32");

        warnSlidingWindow(f, arch);
        try {
            return ModelConfig.builder()
                    .architecture(arch).hiddenSize(hidden).numLayers(layers).numHeads(heads).numKvHeads(kvHeads).headDim(headDim)
                    .intermediateSize(intermediate).vocabSize(vocab).contextLength(f.optInt("max_position_embeddings", d.contextLength()))
                    .rmsNormEps((float) f.optDouble("rms_norm_eps", 1e-6)).ropeTheta((float) theta).ropeScaling(scaling)
                    .ropeConvention(RopeConvention.ROTATE_HALF).tieWordEmbeddings(tied).attentionBias(bias)
                    .bosTokenId(bos).eosTokenIds(eosAll.stream().mapToInt(Integer::intValue).toArray()).dtype(dtype)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new ModelFormatException(f.file(), e.getMessage(), e);
        }
    }

    private static Architecture architecture(JsonFields f) {
        List<Object> archs = f.optList("architectures").orElse(List.of());
        if (!archs.isEmpty()) {
            if (!(archs.getFirst() instanceof String name)) throw new ModelFormatException(f.file(), "'architectures[0]' must be a string");
            return Architecture.fromHfClass(name).orElseThrow(() -> new ModelFormatException(f.file(),
                    "unsupported architecture '" + name + "' (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM)"));
        }
        String type = f.optString("model_type").orElseThrow(() -> new ModelFormatException(f.file(), "missing required key 'architectures' (and no 'model_type')"));
        return switch (type) {
            case "llama" -> Architecture.LLAMA;
            case "mistral" -> Architecture.MISTRAL;
            case "qwen2" -> Architecture.QWEN2;
            default -> throw new ModelFormatException(f.file(), "unsupported architecture: model_type '" + type + "' (supported: llama, mistral, qwen2)");
        };
    }

    private static RopeScaling ropeScaling(JsonFields s) {
        String type = s.optString("rope_type").or(() -> s.optString("type")).orElse("default");
        return switch (type) {
            case "default" -> null;
            case "linear" -> RopeScaling.linear(s.requireDouble("factor"));
            case "llama3" -> new RopeScaling("llama3", s.requireDouble("factor"), s.requireDouble("low_freq_factor"),
                    s.requireDouble("high_freq_factor"), s.requireInt("original_max_position_embeddings"));
            default -> throw new ModelFormatException(s.file(), "unsupported " + s.prefix() + "rope_type '" + type + "' (supported: default, linear, llama3)");
        };
    }

    private static void warnSlidingWindow(JsonFields f, Architecture arch) {
        boolean used = arch == Architecture.QWEN2 ? f.optBool("use_sliding_window", false) : f.has("sliding_window");
        if (used && f.has("sliding_window")) {
            int window = f.optInt("sliding_window", 0);
            int ctx = f.optInt("max_position_embeddings", Integer.MAX_VALUE);
            if (window < ctx) log.warn("{}: sliding_window {} is ignored: attention is full over the context ({} positions)", f.file(), window, ctx);
        }
    }
}
