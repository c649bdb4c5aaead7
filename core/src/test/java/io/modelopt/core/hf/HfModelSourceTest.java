package io.modelopt.core.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HfModelSourceTest {
    @TempDir Path tmp;

    private static void assertMentions(Exception e, String... parts) {
        for (String p : parts) assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' does not mention '" + p + "'");
    }

    private static void assertShape(HfModelSource s, String name, long... ggmlShape) {
        TensorData t = s.tensors().get(name);
        assertNotNull(t, name);
        assertArrayEquals(ggmlShape, t.shape(), name);
    }

    @Test void stories() {
        try (HfModelSource s = HfModelSource.open(Fixtures.storiesHf())) {
            assertEquals("huggingface", s.format());
            assertEquals(Fixtures.storiesHf(), s.path());
            assertEquals(48, s.tensors().size());
            assertEquals("token_embd.weight", s.tensors().keySet().iterator().next());
            for (TensorData t : s.tensors().values()) {
                assertEquals(GgmlType.F32, t.type(), t.name());
                assertTrue(t.name().matches("token_embd\\.weight|output(_norm)?\\.weight|blk\\.[0-4]\\.(attn_(norm|q|k|v|output)|ffn_(norm|gate|up|down))\\.weight"), t.name());
            }
            assertShape(s, "token_embd.weight", 64, 512);
            assertShape(s, "output.weight", 64, 512); // lm_head stored although tied: kept
            assertShape(s, "output_norm.weight", 64);
            assertShape(s, "blk.0.attn_q.weight", 64, 64);
            assertShape(s, "blk.4.attn_k.weight", 64, 32);
            assertShape(s, "blk.2.attn_v.weight", 64, 32);
            assertShape(s, "blk.1.attn_output.weight", 64, 64);
            assertShape(s, "blk.3.ffn_gate.weight", 64, 172);
            assertShape(s, "blk.3.ffn_up.weight", 64, 172);
            assertShape(s, "blk.3.ffn_down.weight", 172, 64);
            assertShape(s, "blk.0.attn_norm.weight", 64);
            assertShape(s, "blk.0.ffn_norm.weight", 64);
            assertTrue(s.config().tieWordEmbeddings());
            assertEquals(s.config(), HfConfig.load(Fixtures.storiesHf()).modelConfig());
            assertEquals(64L, s.metadata().get("hidden_size"));
            assertEquals("model.layers.0.self_attn.q_proj.weight", s.fileTensorName("blk.0.attn_q.weight"));
            assertEquals("lm_head.weight", s.fileTensorName("output.weight"));
            assertEquals("model.layers.9.mlp.up_proj.weight", s.fileTensorName("blk.9.ffn_up.weight"));
            assertEquals(4 * 260_032 + 4 * 512 * 64, s.tensors().values().stream().mapToLong(TensorData::byteSize).sum(),
                    "README: 260,032 parameters + the stored lm_head copy");
        }
    }

    @Test void brown() {
        try (HfModelSource s = HfModelSource.open(Fixtures.brownHf())) {
            assertEquals(39, s.tensors().size());
            assertShape(s, "token_embd.weight", 256, 4096);
            assertShape(s, "output.weight", 256, 4096);
            assertShape(s, "blk.3.attn_q.weight", 256, 256);
            assertShape(s, "blk.3.attn_k.weight", 256, 128);
            assertShape(s, "blk.3.attn_v.weight", 256, 128);
            assertShape(s, "blk.0.ffn_gate.weight", 256, 768);
            assertShape(s, "blk.0.ffn_down.weight", 768, 256);
            assertFalse(s.config().tieWordEmbeddings());
            assertEquals(5_245_184L, s.tensors().values().stream().mapToLong(TensorData::elementCount).sum());
            assertTrue(s.tensors().get("blk.0.attn_q.weight").data().isMapped(), "zero-copy");
        }
    }

    /** Tokenizers.fromHuggingFace may not exist yet: opening must not need it. */
    @Test void tokenizerIsLazy() {
        try (HfModelSource s = HfModelSource.open(Fixtures.brownHf())) {
            try {
                assertEquals(4096, s.tokenizer().vocabSize());
                assertTrue(s.tokenizer() == s.tokenizer(), "cached");
            } catch (UnsupportedOperationException notYet) {
                // tokenizer.json support arrives separately
            }
        }
    }

    @Test void closeUnmaps() {
        HfModelSource s = HfModelSource.open(Fixtures.storiesHf());
        MemorySegment seg = s.tensors().get("output_norm.weight").data();
        s.close();
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test void tiedWithoutLmHeadHasNoOutput() throws IOException {
        TinyHfModel m = new TinyHfModel();
        m.tie = true;
        m.lmHead = false;
        try (HfModelSource s = HfModelSource.open(m.write(tmp.resolve("tied")))) {
            assertFalse(s.tensors().containsKey("output.weight"));
            assertEquals(1 + 1 + 9 * 2, s.tensors().size());
        }
        m.tie = false;
        Path untied = m.write(tmp.resolve("untied"));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(untied)), "missing tensor 'lm_head.weight'", "model.safetensors");
    }

    @Test void qwen2WithBiasTiedBf16() throws IOException {
        TinyHfModel m = new TinyHfModel();
        m.architecture = "Qwen2ForCausalLM";
        m.modelType = "qwen2";
        m.tie = true;
        m.lmHead = false;
        m.bias = true;
        m.dtype = SafetensorsDType.BF16;
        m.dtypeOverride.put("model.norm.weight", SafetensorsDType.F32);
        m.dtypeOverride.put("model.layers.1.mlp.up_proj.weight", SafetensorsDType.F16);
        try (HfModelSource s = HfModelSource.open(m.write(tmp.resolve("qwen")))) {
            assertEquals(Architecture.QWEN2, s.config().architecture());
            assertTrue(s.config().attentionBias());
            assertShape(s, "blk.1.attn_q.bias", 16);
            assertShape(s, "blk.1.attn_k.bias", 8);
            assertShape(s, "blk.0.attn_v.bias", 8);
            assertEquals(GgmlType.BF16, s.tensors().get("blk.0.attn_q.weight").type());
            assertEquals(GgmlType.F32, s.tensors().get("output_norm.weight").type());
            assertEquals(GgmlType.F16, s.tensors().get("blk.1.ffn_up.weight").type());
            assertFalse(s.tensors().containsKey("output.weight"));
        }
        m.bias = false; // Qwen2 always needs the Q/K/V biases
        Path noBias = m.write(tmp.resolve("qwen-nobias"));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(noBias)), "missing tensor 'model.layers.0.self_attn.q_proj.bias'");
    }

    @Test void explicitHeadDimShapes() throws IOException {
        TinyHfModel m = new TinyHfModel();
        m.headDim = 6; // q = 4 heads * 6 = 24 != hidden 16
        try (HfModelSource s = HfModelSource.open(m.write(tmp.resolve("hd")))) {
            assertShape(s, "blk.0.attn_q.weight", 16, 24);
            assertShape(s, "blk.0.attn_k.weight", 16, 12);
            assertShape(s, "blk.0.attn_output.weight", 24, 16);
        }
    }

    @Test void unsupportedWeightDtype() throws IOException {
        TinyHfModel m = new TinyHfModel();
        m.dtypeOverride.put("model.layers.1.self_attn.k_proj.weight", SafetensorsDType.I32);
        Path d = m.write(tmp.resolve("i32"));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(d)),
                "model.safetensors", "'model.layers.1.self_attn.k_proj.weight' has dtype I32", "F32, F16 or BF16");
    }

    @Test void unknownTensorsKeptOrSkipped() throws IOException {
        TinyHfModel m = new TinyHfModel();
        Path d = Files.createDirectories(tmp.resolve("extra"));
        Files.writeString(d.resolve("config.json"), Json.writePretty(m.config()));
        m.weights(1)
                .add("model.layers.0.self_attn.rotary_emb.inv_freq", new long[] {2}, new float[] {1f, 0.01f})
                .add("some.mask", SafetensorsDType.BOOL, new long[] {3}, MemorySegment.ofArray(new byte[] {1, 0, 1}))
                .write(d.resolve("model.safetensors"));
        try (HfModelSource s = HfModelSource.open(d)) {
            assertTrue(s.tensors().containsKey("model.layers.0.self_attn.rotary_emb.inv_freq"));
            assertFalse(s.tensors().containsKey("some.mask"));
            assertEquals("model.layers.0.self_attn.rotary_emb.inv_freq", s.fileTensorName("model.layers.0.self_attn.rotary_emb.inv_freq"));
        }
    }

    @Test void shapeMismatchWithConfig() throws IOException {
        TinyHfModel m = new TinyHfModel();
        Path d = m.write(tmp.resolve("mismatch"));
        m.ff = 32;
        Files.writeString(d.resolve("config.json"), Json.writePretty(m.config()));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(d)),
                "'model.layers.0.mlp.gate_proj.weight' has ggml shape [16, 24] but the config implies [16, 32]");
    }

    @Test void missingFiles() throws IOException {
        Path d = Files.createDirectories(tmp.resolve("empty"));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(d)), d.toString(), "config.json");
        Files.writeString(d.resolve("config.json"), Json.writePretty(new TinyHfModel().config()));
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(d)), d.toString(), "model.safetensors", "model.safetensors.index.json");
        assertMentions(assertThrows(ModelFormatException.class, () -> HfModelSource.open(d.resolve("nope"))), "not a directory");
    }

    /** Header flips through the whole loading path: load (all checks passed) or ModelFormatException. */
    @Test void corruptedHeadersLoadOrFailCleanly() throws IOException {
        Path d = Files.createDirectories(tmp.resolve("flip"));
        Files.copy(Fixtures.storiesHf().resolve("config.json"), d.resolve("config.json"));
        byte[] original = Files.readAllBytes(Fixtures.storiesHf().resolve("model.safetensors"));
        Random rnd = new Random(99);
        int loaded = 0;
        for (int i = 0; i < 100; i++) {
            byte[] b = original.clone();
            int at = rnd.nextInt(8 + 4936);
            b[at] ^= (byte) (1 << rnd.nextInt(8));
            Files.write(d.resolve("model.safetensors"), b);
            try (HfModelSource s = HfModelSource.open(d)) {
                loaded++;
                assertTrue(s.tensors().size() >= 47);
            } catch (ModelFormatException expected) {
                // rejected with a message
            } catch (Throwable t) {
                fail("flip at " + at + ": unexpected " + t, t);
            }
        }
        assertTrue(loaded < 50, "most flips must be caught, " + loaded + " loaded");
    }

    @Test void generationConfigIsExposed() throws IOException {
        TinyHfModel m = new TinyHfModel();
        Path d = m.write(tmp.resolve("gen"));
        Files.writeString(d.resolve("generation_config.json"), Json.write(Map.of("eos_token_id", java.util.List.of(2, 9), "temperature", 0.5, "top_k", 40)));
        try (HfModelSource s = HfModelSource.open(d)) {
            assertArrayEquals(new int[] {2, 9}, s.config().eosTokenIds());
            assertEquals(0.5, s.generationConfig().temperature());
            assertEquals(40, s.generationConfig().topK());
        }
    }
}
