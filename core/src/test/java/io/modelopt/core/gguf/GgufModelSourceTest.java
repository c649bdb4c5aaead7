package io.modelopt.core.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tokenizer.GgufVocabulary;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufModelSourceTest {
    @TempDir Path tmp;

    @Test
    void stories260K() {
        try (GgufModelSource m = GgufModelSource.open(Fixtures.storiesGguf("f32"))) {
            ModelConfig c = m.config();
            assertEquals("gguf", m.format());
            assertEquals(Architecture.LLAMA, c.architecture());
            assertEquals(64, c.hiddenSize());
            assertEquals(5, c.numLayers());
            assertEquals(8, c.numHeads());
            assertEquals(4, c.numKvHeads());
            assertEquals(8, c.headDim());
            assertEquals(172, c.intermediateSize());
            assertEquals(512, c.vocabSize());
            assertEquals(128, c.contextLength(), "the converter's n_ctx, see the fixture README");
            assertEquals(1e-5f, c.rmsNormEps());
            assertEquals(10000f, c.ropeTheta());
            assertNull(c.ropeScaling());
            assertEquals(RopeConvention.ADJACENT_PAIRS, c.ropeConvention());
            assertFalse(c.tieWordEmbeddings(), "this converter writes output.weight");
            assertFalse(c.attentionBias());
            assertEquals(1, c.bosTokenId());
            assertArrayEquals(new int[] {2}, c.eosTokenIds());
            assertEquals("float32", c.dtype());
            assertEquals(48, m.tensors().size());
            assertEquals("blk.0.attn_q.weight", m.fileTensorName("blk.0.attn_q.weight"));
            assertEquals("llama", m.metadata().get("general.architecture"));
            assertEquals(128L, m.metadata().get("llama.context_length"));
            assertEquals("array<STRING>[512]", m.metadata().get("tokenizer.ggml.tokens"));

            GgufVocabulary v = m.vocabulary();
            assertEquals("llama", v.model());
            assertNull(v.pre());
            assertEquals(512, v.tokens().size());
            assertEquals(512, v.scores().length);
            assertEquals(6, v.tokenTypes()[3]);
            assertNull(v.merges());
            assertEquals(1, v.bosId());
            assertEquals(2, v.eosId());
            assertEquals(0, v.unkId());
            assertEquals(-1, v.padId(), "uint32 0xFFFFFFFF means no token");
            assertNull(v.addBos());
            assertNull(v.addSpacePrefix());
        }
    }

    @Test
    void brownLlama() {
        for (String type : List.of("f32", "q8_0", "q6_K", "q4_K_M", "q4_0")) {
            try (GgufModelSource m = GgufModelSource.open(Fixtures.brownGguf(type))) {
                ModelConfig c = m.config();
                assertEquals(256, c.hiddenSize());
                assertEquals(4, c.numLayers());
                assertEquals(8, c.numHeads());
                assertEquals(4, c.numKvHeads());
                assertEquals(32, c.headDim());
                assertEquals(768, c.intermediateSize());
                assertEquals(4096, c.vocabSize());
                assertEquals(256, c.contextLength());
                assertEquals(1e-5f, c.rmsNormEps());
                assertFalse(c.tieWordEmbeddings());
                assertEquals(1, c.bosTokenId());
                assertArrayEquals(new int[] {2}, c.eosTokenIds());
                assertEquals(switch (type) { case "f32" -> "float32"; case "q8_0" -> "Q8_0"; case "q6_K" -> "Q6_K";
                    case "q4_K_M" -> "Q4_K_M"; default -> "Q4_0"; }, c.dtype(), type);
                GgufVocabulary v = m.vocabulary();
                assertEquals("default", v.pre());
                assertEquals(Boolean.TRUE, v.addBos());
                assertEquals(Boolean.FALSE, v.addEos());
                assertEquals("▁t", v.tokens().get(259));
                assertEquals(39, m.tensors().size());
            }
        }
    }

    @Test
    void tokenizerIsLazy() {
        // loading must not depend on the tokenizer implementation; whatever fromGguf does happens on first use
        try (GgufModelSource m = GgufModelSource.open(Fixtures.storiesGguf("q8_0"))) {
            try {
                assertSame(m.tokenizer(), m.tokenizer());
            } catch (UnsupportedOperationException notYet) {
                // Tokenizers.fromGguf not implemented yet on this branch
            }
        }
    }

    /** A minimal synthetic model; {@code edit} adjusts it before writing. */
    private Path synthetic(String name, Consumer<GgufWriter> edit) {
        GgufWriter w = new GgufWriter()
                .putString("general.architecture", "qwen2")
                .putUInt32("qwen2.embedding_length", 64).putUInt32("qwen2.block_count", 2)
                .putUInt32("qwen2.attention.head_count", 4).putUInt32("qwen2.attention.head_count_kv", 2)
                .putUInt32("qwen2.feed_forward_length", 128).putUInt32("qwen2.context_length", 1024)
                .putFloat32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f).putFloat32("qwen2.rope.freq_base", 1e6f)
                .putString("tokenizer.ggml.model", "gpt2")
                .putStringArray("tokenizer.ggml.tokens", List.of("a", "b", "c", "<|endoftext|>", "<|im_end|>"))
                .putStringArray("tokenizer.ggml.merges", List.of("a b"))
                .putUInt32("tokenizer.ggml.eos_token_id", 3).putUInt32("tokenizer.ggml.eot_token_id", 4)
                .putUInt32("tokenizer.ggml.bos_token_id", 3)
                .putUInt32("general.file_type", 15);
        w.addTensor("token_embd.weight", GgmlType.F32, new long[] {64, 5}, new byte[64 * 5 * 4]);
        w.addTensor("blk.0.attn_q.bias", GgmlType.F32, new long[] {64}, new byte[64 * 4]);
        edit.accept(w);
        Path p = tmp.resolve(name + ".gguf");
        w.write(p);
        return p;
    }

    @Test
    void qwen2Synthetic() {
        try (GgufModelSource m = GgufModelSource.open(synthetic("q", w -> w.putString("qwen2.rope.scaling.type", "linear")
                .putFloat32("qwen2.rope.scaling.factor", 4f)))) {
            ModelConfig c = m.config();
            assertEquals(Architecture.QWEN2, c.architecture());
            assertEquals(RopeConvention.ROTATE_HALF, c.ropeConvention());
            assertEquals(16, c.headDim(), "default embd / heads");
            assertEquals(1e6f, c.ropeTheta());
            assertEquals(RopeScaling.linear(4), c.ropeScaling());
            assertTrue(c.tieWordEmbeddings(), "no output.weight");
            assertTrue(c.attentionBias());
            assertArrayEquals(new int[] {3, 4}, c.eosTokenIds(), "eos and eot both end generation");
            assertEquals(5, c.vocabSize());
            assertEquals("Q4_K_M", c.dtype());
            assertEquals(List.of("a b"), m.vocabulary().merges());
        }
    }

    @Test
    void configErrorsNameTheKey() {
        var e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("arch", w -> w.putString("general.architecture", "gptx"))));
        assertTrue(e.getMessage().contains("unsupported architecture 'gptx'"), e.getMessage());
        e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("missing", w -> w.remove("qwen2.block_count"))));
        assertTrue(e.getMessage().contains("missing metadata key 'qwen2.block_count'"), e.getMessage());
        e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("type", w -> w.putString("qwen2.context_length", "1k"))));
        assertTrue(e.getMessage().contains("'qwen2.context_length' is STRING, expected an integer"), e.getMessage());
        e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("kv", w -> w.putUInt32("qwen2.attention.head_count_kv", 3))));
        assertTrue(e.getMessage().contains("numKvHeads"), e.getMessage());
        e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("yarn", w -> w.putString("qwen2.rope.scaling.type", "yarn"))));
        assertTrue(e.getMessage().contains("unsupported RoPE scaling type 'yarn'"), e.getMessage());
        e = assertThrows(ModelFormatException.class, () -> GgufModelSource.open(synthetic("embd", w -> w.putStringArray("tokenizer.ggml.tokens", List.of("a")))));
        assertTrue(e.getMessage().contains("token_embd.weight has shape [64, 5], expected [64, 1]"), e.getMessage());
    }
}
