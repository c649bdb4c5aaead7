package io.modelopt.core.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Reads the real fixture GGUFs (written by llama.cpp's gguf.cpp and by gguf-py) and checks them against the fixtures' README. */
class GgufFileFixtureTest {

    private static Map<GgmlType, Integer> typeCounts(GgufFile f) {
        Map<GgmlType, Integer> m = new EnumMap<>(GgmlType.class);
        for (GgufTensorInfo t : f.tensorInfos()) m.merge(t.type(), 1, Integer::sum);
        return m;
    }

    @Test
    void stories260KF32() {
        try (GgufFile f = GgufFile.open(Fixtures.storiesGguf("f32"))) {
            assertEquals(3, f.version());
            assertEquals(32, f.alignment());
            assertEquals(19, f.metadata().size());
            assertEquals("llama", f.getString("general.architecture"));
            assertEquals(128, f.getInt("llama.context_length"));
            assertEquals(64, f.getInt("llama.embedding_length"));
            assertEquals(172, f.getInt("llama.feed_forward_length"));
            assertEquals(8, f.getInt("llama.attention.head_count"));
            assertEquals(4, f.getInt("llama.attention.head_count_kv"));
            assertEquals(5, f.getInt("llama.block_count"));
            assertEquals(1e-5f, f.getFloat("llama.attention.layer_norm_rms_epsilon"));
            assertEquals(GgufType.UINT32, f.get("llama.context_length").type());
            assertEquals(4294967295L, f.getLong("tokenizer.ggml.padding_token_id"));
            assertThrows(ModelFormatException.class, () -> f.getInt("tokenizer.ggml.padding_token_id"));
            List<String> tokens = f.getStringList("tokenizer.ggml.tokens");
            assertEquals(512, tokens.size());
            assertEquals(List.of("<unk>", "<s>", "</s>", "<0x00>"), tokens.subList(0, 4));
            int[] types = f.getIntArray("tokenizer.ggml.token_type");
            assertEquals(2, types[0]);
            assertEquals(3, types[1]);
            assertEquals(6, types[3]);
            assertEquals(6, types[258]);
            assertEquals(1, types[259]);
            assertEquals(512, f.getFloatArray("tokenizer.ggml.scores").length);

            assertEquals(48, f.tensorInfos().size());
            assertEquals(Map.of(GgmlType.F32, 48), typeCounts(f));
            assertArrayEquals(new long[] {64, 512}, f.tensorInfo("token_embd.weight").orElseThrow().dims());
            assertArrayEquals(new long[] {64, 512}, f.tensorInfo("output.weight").orElseThrow().dims());
            assertArrayEquals(new long[] {64}, f.tensorInfo("output_norm.weight").orElseThrow().dims());
            for (int l = 0; l < 5; l++) {
                assertArrayEquals(new long[] {64, 64}, f.tensor("blk." + l + ".attn_q.weight").shape());
                assertArrayEquals(new long[] {64, 32}, f.tensor("blk." + l + ".attn_k.weight").shape());
                assertArrayEquals(new long[] {64, 32}, f.tensor("blk." + l + ".attn_v.weight").shape());
                assertArrayEquals(new long[] {64, 64}, f.tensor("blk." + l + ".attn_output.weight").shape());
                assertArrayEquals(new long[] {64, 172}, f.tensor("blk." + l + ".ffn_gate.weight").shape());
                assertArrayEquals(new long[] {64, 172}, f.tensor("blk." + l + ".ffn_up.weight").shape());
                assertArrayEquals(new long[] {172, 64}, f.tensor("blk." + l + ".ffn_down.weight").shape());
                assertArrayEquals(new long[] {64}, f.tensor("blk." + l + ".attn_norm.weight").shape());
                assertArrayEquals(new long[] {64}, f.tensor("blk." + l + ".ffn_norm.weight").shape());
            }
            // the converter copies the embedding into output.weight
            TensorData emb = f.tensor("token_embd.weight"), out = f.tensor("output.weight");
            assertEquals(-1, emb.data().mismatch(out.data()));
            long params = 0;
            for (GgufTensorInfo t : f.tensorInfos()) if (!t.name().equals("output.weight")) params += t.elementCount();
            assertEquals(260_032, params, "README: 260,032 parameters with the classifier shared");
        }
    }

    @Test
    void stories260KQuantizedTypes() {
        try (GgufFile f = GgufFile.open(Fixtures.storiesGguf("q4_0"))) {
            assertEquals(Map.of(GgmlType.Q4_0, 31, GgmlType.Q8_0, 1, GgmlType.F32, 16), typeCounts(f));
            assertEquals(GgmlType.Q8_0, f.tensorInfo("output.weight").orElseThrow().type());
            assertEquals(GgmlType.F32, f.tensorInfo("blk.2.ffn_down.weight").orElseThrow().type());
            assertEquals(2, f.getInt("general.file_type"));
            assertEquals(2, f.getInt("general.quantization_version"));
        }
        try (GgufFile f = GgufFile.open(Fixtures.storiesGguf("q8_0"))) {
            assertEquals(Map.of(GgmlType.Q8_0, 32, GgmlType.F32, 16), typeCounts(f));
            assertEquals(7, f.getInt("general.file_type"));
        }
    }

    @Test
    void brownLlamaTypes() {
        record Expect(String type, Map<GgmlType, Integer> counts) {}
        List<Expect> all = List.of(
                new Expect("f32", Map.of(GgmlType.F32, 39)),
                new Expect("q8_0", Map.of(GgmlType.Q8_0, 30, GgmlType.F32, 9)),
                new Expect("q6_K", Map.of(GgmlType.Q6_K, 30, GgmlType.F32, 9)),
                new Expect("q4_0", Map.of(GgmlType.Q4_0, 29, GgmlType.Q6_K, 1, GgmlType.F32, 9)),
                new Expect("q4_K_M", Map.of(GgmlType.Q4_K, 25, GgmlType.Q6_K, 5, GgmlType.F32, 9)));
        for (Expect e : all) {
            try (GgufFile f = GgufFile.open(Fixtures.brownGguf(e.type()))) {
                assertEquals(e.counts(), typeCounts(f), e.type());
                assertEquals(256, f.getInt("llama.context_length"));
                assertEquals(256, f.getInt("llama.embedding_length"));
                assertEquals(4, f.getInt("llama.block_count"));
                assertEquals(768, f.getInt("llama.feed_forward_length"));
                assertEquals(32, f.getInt("llama.attention.key_length"));
                assertEquals(10000f, f.getFloat("llama.rope.freq_base"));
                assertEquals("default", f.getString("tokenizer.ggml.pre"));
                assertTrue(f.getBoolean("tokenizer.ggml.add_bos_token"));
                assertFalse(f.getBoolean("tokenizer.ggml.add_eos_token"));
                assertEquals(4096, f.getStringList("tokenizer.ggml.tokens").size());
                assertEquals(-1000f, f.getFloatArray("tokenizer.ggml.scores")[0]);
                assertArrayEquals(new long[] {256, 4096}, f.tensor("token_embd.weight").shape());
                assertArrayEquals(new long[] {256, 4096}, f.tensor("output.weight").shape());
                assertArrayEquals(new long[] {256, 128}, f.tensor("blk.0.attn_k.weight").shape());
                assertArrayEquals(new long[] {768, 256}, f.tensor("blk.3.ffn_down.weight").shape());
                if (e.type().equals("q4_K_M")) {
                    for (String n : List.of("output.weight", "blk.2.attn_v.weight", "blk.3.attn_v.weight", "blk.2.ffn_down.weight", "blk.3.ffn_down.weight")) {
                        assertEquals(GgmlType.Q6_K, f.tensorInfo(n).orElseThrow().type(), n);
                    }
                }
                long params = 0;
                for (GgufTensorInfo t : f.tensorInfos()) params += t.elementCount();
                assertEquals(5_245_184, params, "README: 5,245,184 parameters");
            }
        }
    }

    /** Every tensor view holds exactly the file's bytes at data offset + tensor offset, read independently. */
    @ParameterizedTest
    @ValueSource(strings = {"stories260K/gguf/stories260K-q4_0.gguf", "brown-llama/gguf/brown-llama-q4_K_M.gguf", "brown-llama/gguf/brown-llama-q8_0.gguf"})
    void tensorBytesAreTheFileBytes(String fixture) throws IOException {
        Path p = Fixtures.file(fixture);
        try (GgufFile f = GgufFile.open(p); FileChannel ch = FileChannel.open(p)) {
            assertEquals(0, f.dataOffset() % f.alignment());
            long expectedOffset = 0;
            for (GgufTensorInfo info : f.tensorInfos()) {
                // ggml writes tensors back to back, each padded to the alignment
                assertEquals(expectedOffset, info.offset(), info.name());
                expectedOffset += (info.byteSize() + f.alignment() - 1) / f.alignment() * f.alignment();
                TensorData t = f.tensor(info.name());
                ByteBuffer expected = ByteBuffer.allocate(Math.toIntExact(info.byteSize()));
                ch.read(expected, f.dataOffset() + info.offset());
                assertFalse(expected.hasRemaining());
                assertArrayEquals(expected.array(), t.data().toArray(ValueLayout.JAVA_BYTE), info.name());
            }
            assertEquals(f.fileSize(), f.dataOffset() + expectedOffset, "the data section ends with the last tensor's padding");
            // a known value: RMSNorm weights are F32, read one through the mapping
            TensorData norm = f.tensor("output_norm.weight");
            ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, f.dataOffset() + f.tensorInfo("output_norm.weight").orElseThrow().offset());
            assertEquals(b.getFloat(0), norm.data().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0));
        }
    }

    @Test
    void closeUnmaps() {
        GgufFile f = GgufFile.open(Fixtures.storiesGguf("q8_0"));
        TensorData t = f.tensor("output_norm.weight");
        t.data().get(ValueLayout.JAVA_BYTE, 0);
        f.close();
        f.close();
        assertFalse(f.isOpen());
        assertThrows(IllegalStateException.class, () -> t.data().get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, f::tensors);
    }
}
