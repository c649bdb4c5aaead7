package io.modelopt.core.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HfConfigTest {
    @TempDir Path tmp;

    /** Values from fixtures/README.md §2 (stories260K). */
    @Test void storiesConfig() {
        HfConfig hf = HfConfig.load(Fixtures.storiesHf());
        ModelConfig c = hf.modelConfig();
        assertEquals(Architecture.LLAMA, c.architecture());
        assertEquals(64, c.hiddenSize());
        assertEquals(5, c.numLayers());
        assertEquals(8, c.numHeads());
        assertEquals(4, c.numKvHeads());
        assertEquals(8, c.headDim());
        assertEquals(172, c.intermediateSize());
        assertEquals(512, c.vocabSize());
        assertEquals(512, c.contextLength());
        assertEquals(1e-5f, c.rmsNormEps());
        assertEquals(10000f, c.ropeTheta());
        assertNull(c.ropeScaling());
        assertEquals(RopeConvention.ROTATE_HALF, c.ropeConvention());
        assertTrue(c.tieWordEmbeddings());
        assertFalse(c.attentionBias());
        assertEquals(1, c.bosTokenId());
        assertArrayEquals(new int[] {2}, c.eosTokenIds());
        assertEquals("float32", c.dtype());
        assertEquals("llama", hf.modelType());
        assertEquals(GenerationConfig.NONE, hf.generation());
        assertEquals(25, hf.raw().size()); // python: len(json.load(config.json))
        assertEquals("silu", hf.raw().get("hidden_act"));
    }

    /** Values from fixtures/README.md §3 (brown-llama). */
    @Test void brownConfig() {
        ModelConfig c = HfConfig.read(Fixtures.brownHf().resolve("config.json"));
        assertEquals(ModelConfig.builder().architecture(Architecture.LLAMA).hiddenSize(256).numLayers(4).numHeads(8).numKvHeads(4).headDim(32)
                .intermediateSize(768).vocabSize(4096).contextLength(256).rmsNormEps(1e-5f).ropeTheta(10000f).ropeConvention(RopeConvention.ROTATE_HALF)
                .tieWordEmbeddings(false).attentionBias(false).bosTokenId(1).eosTokenIds(2).dtype("float32").build(), c);
    }

    private Path dir(Map<String, Object> config, Map<String, Object> generation) throws IOException {
        Path d = Files.createDirectories(tmp.resolve("m" + System.nanoTime()));
        Files.writeString(d.resolve("config.json"), Json.writePretty(config));
        if (generation != null) Files.writeString(d.resolve("generation_config.json"), Json.writePretty(generation));
        return d;
    }

    private static Map<String, Object> base(String arch, String type) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("architectures", List.of(arch));
        m.put("model_type", type);
        m.put("hidden_size", 4096);
        m.put("intermediate_size", 14336);
        m.put("num_hidden_layers", 32);
        m.put("num_attention_heads", 32);
        m.put("vocab_size", 32000);
        return m;
    }

    /** Mistral-7B-v0.1's config.json. */
    @Test void mistral() throws IOException {
        Map<String, Object> m = base("MistralForCausalLM", "mistral");
        m.put("num_key_value_heads", 8);
        m.put("max_position_embeddings", 32768);
        m.put("rms_norm_eps", 1e-5);
        m.put("rope_theta", 10000.0);
        m.put("sliding_window", 4096);
        m.put("tie_word_embeddings", false);
        m.put("torch_dtype", "bfloat16");
        m.put("bos_token_id", 1);
        m.put("eos_token_id", 2);
        ModelConfig c = HfConfig.load(dir(m, null)).modelConfig();
        assertEquals(Architecture.MISTRAL, c.architecture());
        assertEquals(8, c.numKvHeads());
        assertEquals(128, c.headDim());
        assertEquals(32768, c.contextLength());
        assertEquals(1e-5f, c.rmsNormEps());
        assertEquals("bfloat16", c.dtype());
        assertFalse(c.attentionBias());
    }

    /** Mistral defaults when keys are absent (MistralConfig: 4096*32 positions, eps 1e-6, bos 1, eos 2). */
    @Test void mistralDefaults() throws IOException {
        ModelConfig c = HfConfig.load(dir(base("MistralForCausalLM", "mistral"), null)).modelConfig();
        assertEquals(131072, c.contextLength());
        assertEquals(1e-6f, c.rmsNormEps());
        assertEquals(32, c.numKvHeads());
        assertEquals(10000f, c.ropeTheta());
        assertEquals(1, c.bosTokenId());
        assertArrayEquals(new int[] {2}, c.eosTokenIds());
        assertEquals("float32", c.dtype());
    }

    /** Qwen2.5-0.5B-Instruct's config.json: biases implied, tied, theta 1e6, sliding window off; generation config adds an EOS. */
    @Test void qwen2TiedWithBias() throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("architectures", List.of("Qwen2ForCausalLM"));
        m.put("attention_dropout", 0.0);
        m.put("bos_token_id", 151643);
        m.put("eos_token_id", 151645);
        m.put("hidden_act", "silu");
        m.put("hidden_size", 896);
        m.put("initializer_range", 0.02);
        m.put("intermediate_size", 4864);
        m.put("max_position_embeddings", 32768);
        m.put("max_window_layers", 21);
        m.put("model_type", "qwen2");
        m.put("num_attention_heads", 14);
        m.put("num_hidden_layers", 24);
        m.put("num_key_value_heads", 2);
        m.put("rms_norm_eps", 1e-06);
        m.put("rope_theta", 1000000.0);
        m.put("sliding_window", 32768);
        m.put("tie_word_embeddings", true);
        m.put("torch_dtype", "bfloat16");
        m.put("use_cache", true);
        m.put("use_sliding_window", false);
        m.put("vocab_size", 151936);
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("bos_token_id", 151643);
        g.put("pad_token_id", 151643);
        g.put("do_sample", true);
        g.put("eos_token_id", List.of(151645, 151643));
        g.put("repetition_penalty", 1.1);
        g.put("temperature", 0.7);
        g.put("top_p", 0.8);
        g.put("top_k", 20);
        HfConfig hf = HfConfig.load(dir(m, g));
        ModelConfig c = hf.modelConfig();
        assertEquals(Architecture.QWEN2, c.architecture());
        assertEquals(64, c.headDim());
        assertEquals(2, c.numKvHeads());
        assertTrue(c.attentionBias());
        assertTrue(c.tieWordEmbeddings());
        assertEquals(1e6f, c.ropeTheta());
        assertEquals(1e-6f, c.rmsNormEps());
        assertEquals(151643, c.bosTokenId());
        assertArrayEquals(new int[] {151645, 151643}, c.eosTokenIds());
        GenerationConfig gen = hf.generation();
        assertEquals(0.7, gen.temperature());
        assertEquals(0.8, gen.topP());
        assertEquals(20, gen.topK());
        assertEquals(Boolean.TRUE, gen.doSample());
        assertEquals(1.1, gen.repetitionPenalty());
        assertEquals(151643, gen.padTokenId());
        assertNull(gen.maxNewTokens());
    }

    /** Qwen2Config defaults: theta 10000, untied, no bos/eos, 32768 positions. */
    @Test void qwen2Defaults() throws IOException {
        ModelConfig c = HfConfig.load(dir(base("Qwen2ForCausalLM", "qwen2"), null)).modelConfig();
        assertEquals(10000f, c.ropeTheta());
        assertFalse(c.tieWordEmbeddings());
        assertTrue(c.attentionBias());
        assertEquals(-1, c.bosTokenId());
        assertArrayEquals(new int[0], c.eosTokenIds());
        assertEquals(32768, c.contextLength());
    }

    /** Llama-3.1-8B-Instruct's config.json (rope_scaling llama3, eos list) with its generation_config.json. */
    @Test void llama31() throws IOException {
        Map<String, Object> m = base("LlamaForCausalLM", "llama");
        m.put("num_key_value_heads", 8);
        m.put("vocab_size", 128256);
        m.put("max_position_embeddings", 131072);
        m.put("rope_theta", 500000.0);
        m.put("rope_scaling", Map.of("factor", 8.0, "low_freq_factor", 1.0, "high_freq_factor", 4.0, "original_max_position_embeddings", 8192, "rope_type", "llama3"));
        m.put("bos_token_id", 128000);
        m.put("eos_token_id", List.of(128001, 128008, 128009));
        m.put("attention_bias", false);
        m.put("mlp_bias", false);
        Map<String, Object> g = Map.of("bos_token_id", 128000, "do_sample", true, "eos_token_id", List.of(128001, 128008, 128009), "temperature", 0.6, "top_p", 0.9);
        HfConfig hf = HfConfig.load(dir(m, g));
        ModelConfig c = hf.modelConfig();
        assertEquals(new RopeScaling("llama3", 8.0, 1.0, 4.0, 8192), c.ropeScaling());
        assertEquals(500000f, c.ropeTheta());
        assertArrayEquals(new int[] {128001, 128008, 128009}, c.eosTokenIds());
        assertTrue(c.isEos(128009));
        assertEquals(128000, c.bosTokenId());
        assertEquals(0.6, hf.generation().temperature());
    }

    @Test void eosUnionAndBosFallback() throws IOException {
        Map<String, Object> m = base("LlamaForCausalLM", "llama");
        m.put("bos_token_id", null);
        m.put("eos_token_id", 2);
        HfConfig hf = HfConfig.load(dir(m, Map.of("bos_token_id", 5, "eos_token_id", List.of(7, 2), "max_new_tokens", 64)));
        assertArrayEquals(new int[] {2, 7}, hf.modelConfig().eosTokenIds());
        assertEquals(5, hf.modelConfig().bosTokenId());
        assertEquals(64, hf.generation().maxNewTokens());
    }

    @Test void explicitHeadDim() throws IOException {
        Map<String, Object> m = base("MistralForCausalLM", "mistral"); // Mistral-Nemo: 5120 hidden, 32 heads of 128
        m.put("hidden_size", 5120);
        m.put("num_key_value_heads", 8);
        m.put("head_dim", 128);
        ModelConfig c = HfConfig.load(dir(m, null)).modelConfig();
        assertEquals(128, c.headDim());
        assertEquals(4096, c.qDim());
        assertEquals(1024, c.kvDim());
    }

    @Test void linearScalingLegacyTypeKeyAndV5RopeParameters() throws IOException {
        Map<String, Object> m = base("LlamaForCausalLM", "llama");
        m.put("rope_scaling", Map.of("type", "linear", "factor", 4.0));
        assertEquals(RopeScaling.linear(4.0), HfConfig.load(dir(m, null)).modelConfig().ropeScaling());
        m.put("rope_scaling", Map.of("rope_type", "default"));
        assertNull(HfConfig.load(dir(m, null)).modelConfig().ropeScaling());
        m.remove("rope_scaling");
        m.put("rope_parameters", Map.of("rope_type", "linear", "factor", 2.0, "rope_theta", 250000.0));
        ModelConfig c = HfConfig.load(dir(m, null)).modelConfig();
        assertEquals(RopeScaling.linear(2.0), c.ropeScaling());
        assertEquals(250000f, c.ropeTheta());
    }

    private ModelFormatException fails(Map<String, Object> config) throws IOException {
        Path d = dir(config, null);
        return assertThrows(ModelFormatException.class, () -> HfConfig.load(d));
    }

    private static void assertMentions(Exception e, String... parts) {
        for (String p : parts) assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' does not mention '" + p + "'");
    }

    @Test void errors() throws IOException {
        Map<String, Object> m = base("LlamaForCausalLM", "llama");
        m.put("rope_scaling", Map.of("rope_type", "yarn", "factor", 4.0));
        assertMentions(fails(m), "config.json", "unsupported rope_scaling.rope_type 'yarn'");
        m.put("rope_scaling", Map.of("rope_type", "llama3", "factor", 8.0));
        assertMentions(fails(m), "missing required key 'rope_scaling.low_freq_factor'");
        m.remove("rope_scaling");

        assertMentions(fails(base("GPT2LMHeadModel", "gpt2")), "unsupported architecture 'GPT2LMHeadModel'");
        Map<String, Object> noArch = base("x", "gemma");
        noArch.remove("architectures");
        assertMentions(fails(noArch), "unsupported architecture: model_type 'gemma'");

        Map<String, Object> missing = base("LlamaForCausalLM", "llama");
        missing.remove("intermediate_size");
        ModelFormatException e = fails(missing);
        assertMentions(e, "missing required key 'intermediate_size'");
        assertTrue(e.getMessage().startsWith(tmp.toString()) && e.getMessage().contains("config.json"), e.getMessage());

        Map<String, Object> nulled = base("LlamaForCausalLM", "llama");
        nulled.put("hidden_size", null);
        assertMentions(fails(nulled), "required key 'hidden_size' is null");

        Map<String, Object> wrong = base("LlamaForCausalLM", "llama");
        wrong.put("num_hidden_layers", "32");
        assertMentions(fails(wrong), "key 'num_hidden_layers' must be an integer, found the string \"32\"");
        wrong.put("num_hidden_layers", 32.5);
        assertMentions(fails(wrong), "'num_hidden_layers' must be an integer");
        wrong.put("num_hidden_layers", 32);
        wrong.put("tie_word_embeddings", "yes");
        assertMentions(fails(wrong), "'tie_word_embeddings' must be true or false");
        wrong.put("tie_word_embeddings", false);
        wrong.put("eos_token_id", List.of(1, "x"));
        assertMentions(fails(wrong), "'eos_token_id' must be an integer or a list of integers");
        wrong.put("eos_token_id", 2);
        wrong.put("num_key_value_heads", 5);
        assertMentions(fails(wrong), "numKvHeads");
        wrong.put("num_key_value_heads", 8);
        wrong.put("hidden_act", "gelu");
        assertMentions(fails(wrong), "unsupported 'hidden_act' \"gelu\"");

        Map<String, Object> indivisible = base("LlamaForCausalLM", "llama");
        indivisible.put("hidden_size", 100);
        assertMentions(fails(indivisible), "not a multiple of num_attention_heads");
    }

    @Test void badJsonAndMissingFile() throws IOException {
        Path d = Files.createDirectories(tmp.resolve("bad"));
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> HfConfig.load(d));
        assertMentions(e, d.toString(), "no config.json");
        Files.writeString(d.resolve("config.json"), "{\"hidden_size\": 64,");
        e = assertThrows(ModelFormatException.class, () -> HfConfig.load(d));
        assertMentions(e, "config.json", "not valid JSON");
        Files.writeString(d.resolve("config.json"), "[1]");
        assertMentions(assertThrows(ModelFormatException.class, () -> HfConfig.load(d)), "not valid JSON", "object");
        Files.write(d.resolve("config.json"), new byte[] {'{', '"', (byte) 0xff, '"', ':', '1', '}'});
        assertMentions(assertThrows(ModelFormatException.class, () -> HfConfig.load(d)), "not valid UTF-8");
        Files.writeString(d.resolve("config.json"), Json.write(base("LlamaForCausalLM", "llama")));
        Files.writeString(d.resolve("generation_config.json"), "{\"temperature\": \"hot\"}");
        assertMentions(assertThrows(ModelFormatException.class, () -> HfConfig.load(d)), "generation_config.json", "'temperature' must be a number");
    }
}
