package io.modelopt.core.hf;

import io.modelopt.core.json.Json;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsTensor;
import io.modelopt.core.safetensors.SafetensorsWriter;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/** Writes small synthetic HF model directories (config.json + model.safetensors, seeded random weights) for tests. */
final class TinyHfModel {
    String architecture = "LlamaForCausalLM";
    String modelType = "llama";
    int hidden = 16, heads = 4, kvHeads = 2, layers = 2, ff = 24, vocab = 32;
    Integer headDim;
    boolean tie, lmHead = true, bias;
    SafetensorsDType dtype = SafetensorsDType.F32;
    final Map<String, Object> extra = new LinkedHashMap<>();
    final Map<String, SafetensorsDType> dtypeOverride = new LinkedHashMap<>();

    Map<String, Object> config() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("architectures", java.util.List.of(architecture));
        c.put("model_type", modelType);
        c.put("hidden_size", hidden);
        c.put("intermediate_size", ff);
        c.put("num_hidden_layers", layers);
        c.put("num_attention_heads", heads);
        c.put("num_key_value_heads", kvHeads);
        if (headDim != null) c.put("head_dim", headDim);
        c.put("vocab_size", vocab);
        c.put("max_position_embeddings", 128);
        c.put("rms_norm_eps", 1e-5);
        c.put("tie_word_embeddings", tie);
        c.put("torch_dtype", "float32");
        c.putAll(extra);
        return c;
    }

    /** HF name → PyTorch shape of every tensor this model has. */
    Map<String, long[]> shapes() {
        int hd = headDim != null ? headDim : hidden / heads;
        long q = (long) heads * hd, kv = (long) kvHeads * hd;
        Map<String, long[]> s = new LinkedHashMap<>();
        s.put("model.embed_tokens.weight", new long[] {vocab, hidden});
        for (int i = 0; i < layers; i++) {
            String p = "model.layers." + i + ".";
            s.put(p + "input_layernorm.weight", new long[] {hidden});
            s.put(p + "self_attn.q_proj.weight", new long[] {q, hidden});
            s.put(p + "self_attn.k_proj.weight", new long[] {kv, hidden});
            s.put(p + "self_attn.v_proj.weight", new long[] {kv, hidden});
            if (bias) {
                s.put(p + "self_attn.q_proj.bias", new long[] {q});
                s.put(p + "self_attn.k_proj.bias", new long[] {kv});
                s.put(p + "self_attn.v_proj.bias", new long[] {kv});
            }
            s.put(p + "self_attn.o_proj.weight", new long[] {hidden, q});
            s.put(p + "post_attention_layernorm.weight", new long[] {hidden});
            s.put(p + "mlp.gate_proj.weight", new long[] {ff, hidden});
            s.put(p + "mlp.up_proj.weight", new long[] {ff, hidden});
            s.put(p + "mlp.down_proj.weight", new long[] {hidden, ff});
        }
        s.put("model.norm.weight", new long[] {hidden});
        if (lmHead) s.put("lm_head.weight", new long[] {vocab, hidden});
        return s;
    }

    SafetensorsWriter weights(long seed) {
        Random rnd = new Random(seed);
        SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
        shapes().forEach((name, shape) -> {
            SafetensorsDType dt = dtypeOverride.getOrDefault(name, dtype);
            byte[] bytes = new byte[(int) SafetensorsTensor.byteSizeOf(dt, shape)];
            rnd.nextBytes(bytes);
            w.add(name, dt, shape, MemorySegment.ofArray(bytes));
        });
        return w;
    }

    Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), Json.writePretty(config()));
        weights(dir.toString().hashCode()).write(dir.resolve("model.safetensors"));
        return dir;
    }

    static String canonical(String hfName) { return TensorNames.toGgufOrSelf(hfName); }
}
