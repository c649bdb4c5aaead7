package io.modelopt.core.synthetic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.tokenizer.GgufVocabulary;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The micro preset written as GGUF (all four types) and HF, read back with the project's readers. */
class SyntheticModelTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final SyntheticSpec MICRO = SyntheticSpec.MICRO;

    @TempDir Path dir;

    private Path gguf(GgmlType type, long seed) {
        Path p = dir.resolve("micro-" + type + "-" + seed + ".gguf");
        if (!Files.exists(p)) SyntheticModel.of(MICRO, type, seed).writeGguf(p, (s, d, t) -> {});
        return p;
    }

    @ParameterizedTest @EnumSource(value = GgmlType.class, names = {"F32", "F16", "Q8_0", "Q4_0"})
    void ggufRoundTripsWithConfigTypesAndMetadata(GgmlType type) {
        try (GgufModelSource src = GgufModelSource.open(gguf(type, 1))) {
            ModelConfig c = src.config();
            assertEquals(Architecture.LLAMA, c.architecture());
            assertEquals(64, c.hiddenSize());
            assertEquals(2, c.numLayers());
            assertEquals(4, c.numHeads());
            assertEquals(2, c.numKvHeads());
            assertEquals(16, c.headDim());
            assertEquals(128, c.intermediateSize());
            assertEquals(512, c.vocabSize());
            assertEquals(128, c.contextLength());
            assertEquals(10000f, c.ropeTheta());
            assertEquals(1e-5f, c.rmsNormEps());
            assertFalse(c.tieWordEmbeddings());
            assertEquals(RopeConvention.ADJACENT_PAIRS, c.ropeConvention());
            assertEquals(1, c.bosTokenId());
            assertArrayEquals(new int[] {2}, c.eosTokenIds());

            Map<String, TensorData> tensors = src.tensors();
            assertEquals(2 * 9 + 3, tensors.size());
            for (TensorData t : tensors.values()) {
                GgmlType expected = t.name().endsWith("norm.weight") ? GgmlType.F32 : type;
                assertEquals(expected, t.type(), t.name());
            }
            assertArrayEquals(new long[] {64, 512}, tensors.get("token_embd.weight").shape());
            assertArrayEquals(new long[] {64, 512}, tensors.get("output.weight").shape());
            assertArrayEquals(new long[] {64, 32}, tensors.get("blk.1.attn_k.weight").shape());
            assertArrayEquals(new long[] {128, 64}, tensors.get("blk.0.ffn_down.weight").shape());
            assertArrayEquals(new long[] {64}, tensors.get("blk.0.ffn_norm.weight").shape());

            GgufFile f = src.gguf();
            assertEquals(SyntheticModel.fileType(type), f.getInt("general.file_type"));
            assertEquals(16, f.getInt("llama.rope.dimension_count"));
            assertEquals(512, f.getInt("llama.vocab_size"));
            assertEquals(2, f.getInt("general.quantization_version"));
            assertEquals("synthetic-micro", f.getString("general.name"));
            List<String> keys = new ArrayList<>(f.metadata().keySet());
            // convert_hf_to_gguf.py order; llama-quantize moves general.file_type to the end
            assertEquals("general.architecture", keys.getFirst());
            assertEquals(type.isQuantized() ? "general.file_type" : "general.quantization_version", keys.getLast());
            assertTrue(keys.indexOf("llama.block_count") < keys.indexOf("llama.vocab_size"));

            GgufVocabulary v = src.vocabulary();
            assertEquals("llama", v.model());
            assertEquals(512, v.tokens().size());
            assertEquals("<unk>", v.tokens().get(0));
            assertEquals("<0x0A>", v.tokens().get(3 + 10));
            assertEquals("\u2581w", v.tokens().get(259));
            assertEquals("\u2581w0", v.tokens().get(260));
            assertEquals(SyntheticVocabulary.TYPE_BYTE, v.tokenTypes()[3]);
            assertEquals(SyntheticVocabulary.TYPE_CONTROL, v.tokenTypes()[1]);
            assertEquals(0, v.unkId());
            assertEquals(Boolean.TRUE, v.addBos());
        }
    }

    @Test
    void norms_are_ones_and_matrices_follow_the_random_stream() {
        SyntheticModel m = SyntheticModel.of(MICRO, GgmlType.F32, 1);
        try (GgufModelSource src = GgufModelSource.open(gguf(GgmlType.F32, 1))) {
            float[] norm = floats(src.tensors().get("output_norm.weight"));
            for (float x : norm) assertEquals(1.0f, x);
            for (SyntheticTensor t : SyntheticTensor.convertOrder(MICRO)) {
                float[] data = floats(src.tensors().get(t.name()));
                for (int i = 0; i < data.length; i += 97) assertEquals(m.canonicalValue(t, i), data[i], t.name() + "[" + i + "]");
            }
        }
    }

    @Test
    void sameSeedGivesIdenticalBytesAndOtherSeedsDiffer() throws Exception {
        byte[] a = Files.readAllBytes(gguf(GgmlType.Q4_0, 7));
        byte[] b = SyntheticModel.of(MICRO, GgmlType.Q4_0, 7).ggufWriter((s, d, t) -> {}).toByteArray();
        assertArrayEquals(a, b);
        byte[] c = SyntheticModel.of(MICRO, GgmlType.Q4_0, 8).ggufWriter((s, d, t) -> {}).toByteArray();
        assertEquals(a.length, c.length);
        assertFalse(java.util.Arrays.equals(a, c));
    }

    @Test
    void f16FileHoldsExactlyTheF32Values() {
        try (GgufModelSource f32 = GgufModelSource.open(gguf(GgmlType.F32, 3));
             GgufModelSource f16 = GgufModelSource.open(gguf(GgmlType.F16, 3))) {
            for (TensorData t : f16.tensors().values()) {
                float[] want = floats(f32.tensors().get(t.name()));
                float[] got = floats(t);
                assertArrayEquals(want, got, t.name());
            }
        }
    }

    /**
     * Each Q8_0 / Q4_0 block's scale is what ggml's definition gives for the F32 file's values
     * (computed here in double: Q8_0 d = amax/127, Q4_0 d = -max/8, stored as half), and every
     * dequantized weight is within the format's rounding bound of the F32 weight: |d|/2 for Q8_0,
     * |d| for Q4_0 (whose top level is clamped to 7), plus the scale's half-precision error times
     * the largest level (127 or 8).
     */
    @ParameterizedTest @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0"})
    void quantizedTensorsDequantizeCloseToF32(GgmlType type) {
        double sumSq = 0, sumErrSq = 0;
        try (GgufModelSource f32 = GgufModelSource.open(gguf(GgmlType.F32, 5));
             GgufModelSource q = GgufModelSource.open(gguf(type, 5))) {
            for (TensorData t : q.tensors().values()) {
                if (t.type() == GgmlType.F32) continue;
                float[] ref = floats(f32.tensors().get(t.name()));
                float[] got = new float[ref.length];
                int blockBytes = type == GgmlType.Q8_0 ? Q8_0.BLOCK_BYTES : Q4_0.BLOCK_BYTES;
                if (type == GgmlType.Q8_0) Q8_0.dequantize(t.data(), 0, got, 0, ref.length);
                else Q4_0.dequantize(t.data(), 0, got, 0, ref.length);
                for (int b = 0; b < ref.length / 32; b++) {
                    double amax = 0, max = 0;
                    for (int j = 0; j < 32; j++) {
                        double x = ref[b * 32 + j];
                        if (Math.abs(x) > amax) { amax = Math.abs(x); max = x; }
                    }
                    double dWant = type == GgmlType.Q8_0 ? amax / 127 : max / -8;
                    float d = Float.float16ToFloat(t.data().get(F16, (long) b * blockBytes));
                    assertEquals(Float.float16ToFloat(Float.floatToFloat16((float) dWant)), d, t.name() + " block " + b);
                    // rounding to a level, plus the half-precision error of the scale times the largest level
                    double bound = type == GgmlType.Q8_0 ? 0.5 * Math.abs(dWant) + 127 * Math.abs(d - dWant)
                            : Math.abs(dWant) + 8 * Math.abs(d - dWant);
                    bound = bound * 1.0001 + 1e-9;
                    for (int j = 0; j < 32; j++) {
                        int i = b * 32 + j;
                        assertTrue(Math.abs(got[i] - ref[i]) <= bound, t.name() + "[" + i + "]: " + got[i] + " vs " + ref[i] + ", d " + d);
                        sumSq += (double) ref[i] * ref[i];
                        sumErrSq += (double) (got[i] - ref[i]) * (got[i] - ref[i]);
                    }
                }
            }
        }
        double relRms = Math.sqrt(sumErrSq / sumSq);
        // Gaussian weights: Q8_0 ≈ 0.01, Q4_0 ≈ 0.12 relative RMS error
        assertTrue(relRms < (type == GgmlType.Q8_0 ? 0.02 : 0.2), type + " relative RMS error " + relRms);
        assertTrue(relRms > (type == GgmlType.Q8_0 ? 0.001 : 0.05), type + " relative RMS error " + relRms + " is implausibly small");
    }

    @ParameterizedTest @EnumSource(value = GgmlType.class, names = {"F32", "F16"})
    void hfDirectoryRoundTripsAndHoldsTheSameModelAsTheGguf(GgmlType type) {
        Path hf = dir.resolve("micro-hf-" + type);
        SyntheticModel.of(MICRO, type, 1).writeHuggingFace(hf, (s, d, t) -> {});
        assertTrue(Files.isRegularFile(hf.resolve("tokenizer.json")));
        assertTrue(Files.isRegularFile(hf.resolve("tokenizer_config.json")));
        try (HfModelSource src = HfModelSource.open(hf); GgufModelSource gg = GgufModelSource.open(gguf(GgmlType.F32, 1))) {
            ModelConfig c = src.config();
            ModelConfig g = gg.config();
            assertEquals(g.hiddenSize(), c.hiddenSize());
            assertEquals(g.numLayers(), c.numLayers());
            assertEquals(g.numHeads(), c.numHeads());
            assertEquals(g.numKvHeads(), c.numKvHeads());
            assertEquals(g.intermediateSize(), c.intermediateSize());
            assertEquals(g.vocabSize(), c.vocabSize());
            assertEquals(g.contextLength(), c.contextLength());
            assertEquals(g.rmsNormEps(), c.rmsNormEps());
            assertEquals(g.ropeTheta(), c.ropeTheta());
            assertFalse(c.tieWordEmbeddings());
            assertEquals(RopeConvention.ROTATE_HALF, c.ropeConvention());
            assertEquals(gg.tensors().keySet(), src.tensors().keySet());
            for (TensorData t : src.tensors().values()) {
                assertEquals(type, t.type(), t.name());
                TensorData ref = gg.tensors().get(t.name());
                assertArrayEquals(ref.shape(), t.shape(), t.name());
                float[] want = floats(ref), got = floats(t);
                int cols = (int) t.dim(0), rows = (int) t.rows();
                int heads = t.name().endsWith("attn_q.weight") ? c.numHeads() : t.name().endsWith("attn_k.weight") ? c.numKvHeads() : 0;
                for (int r = 0; r < rows; r++) {
                    int gr = heads == 0 ? r : TensorNames.ggufRowOf(r, rows, heads);
                    for (int j = 0; j < cols; j++) assertEquals(want[gr * cols + j], got[r * cols + j], t.name() + " row " + r);
                }
            }
        }
    }

    /**
     * The vocabulary works with real tokenizers: the GGUF's (llama.cpp's SentencePiece merging by
     * score) and the HF tokenizer.json's (BPE merges with byte fallback) both split "w12 w7 é" into
     * BOS, ▁w12, ▁w7, ▁ and the two UTF-8 bytes of é, and decode it back.
     */
    @Test
    void ggufAndHfTokenizersAgreeOnTheSyntheticVocabulary() {
        SyntheticVocabulary v = new SyntheticVocabulary(MICRO.vocabSize());
        Path hf = dir.resolve("tok-hf");
        SyntheticModel.of(MICRO, GgmlType.F32, 1).writeHuggingFace(hf, (s, d, t) -> {});
        int space = v.tokens().indexOf("\u2581");
        int[] want = {SyntheticVocabulary.BOS, v.wordId(12), v.wordId(7), space, 3 + 0xC3, 3 + 0xA9};
        try (GgufModelSource g = GgufModelSource.open(gguf(GgmlType.F32, 1)); HfModelSource h = HfModelSource.open(hf)) {
            assertArrayEquals(want, g.tokenizer().encode("w12 w7 \u00e9"));
            assertArrayEquals(want, h.tokenizer().encode("w12 w7 \u00e9"));
            assertEquals("w12 w7 \u00e9", g.tokenizer().decode(want));
            assertEquals("w12 w7 \u00e9", h.tokenizer().decode(want));
        }
    }

    @Test
    void hfRefusesQuantizedTypes() {
        assertThrows(IllegalArgumentException.class,
                () -> SyntheticModel.of(MICRO, GgmlType.Q8_0, 1).writeHuggingFace(dir.resolve("x"), (s, d, t) -> {}));
    }

    @Test
    void progressReachesTheTotalAndSizesMatchThePresets() {
        long[] last = {0, 0};
        SyntheticModel m = SyntheticModel.of(MICRO, GgmlType.Q8_0, 1);
        m.writeGguf(dir.resolve("p.gguf"), (stage, done, total) -> {
            assertTrue(done >= last[0] && done <= total, done + " of " + total);
            last[0] = done;
            last[1] = total;
        });
        assertEquals(m.ggufTensorBytes(), last[1]);
        assertEquals(last[1], last[0]);
        // PERF.md: tiny1b has 1.100 B parameters, small125m 134.1 M; llama.cpp file sizes 619.9 MB (Q4_0), 1169.9 MB (Q8_0)
        assertEquals(1_100_048_384L, SyntheticSpec.TINY_1B.parameterCount());
        assertEquals(134_105_856L, SyntheticSpec.SMALL_125M.parameterCount());
        long norms = (2L * 22 + 1) * 2048;
        long matrices = SyntheticSpec.TINY_1B.parameterCount() - norms;
        assertEquals(matrices / 32 * 18 + norms * 4, SyntheticModel.of(SyntheticSpec.TINY_1B, GgmlType.Q4_0, 1).ggufTensorBytes());
        assertEquals(matrices / 32 * 34 + norms * 4, SyntheticModel.of(SyntheticSpec.TINY_1B, GgmlType.Q8_0, 1).ggufTensorBytes());
        // plus ~0.8 MB of vocabulary this is llama.cpp's 619.9 MB / 1169.9 MB
        assertEquals(619.9, SyntheticModel.of(SyntheticSpec.TINY_1B, GgmlType.Q4_0, 1).ggufTensorBytes() / 1e6, 1.0);
        assertEquals(1169.9, SyntheticModel.of(SyntheticSpec.TINY_1B, GgmlType.Q8_0, 1).ggufTensorBytes() / 1e6, 1.0);
        assertEquals("1.1B", SyntheticModel.sizeLabel(SyntheticSpec.TINY_1B.parameterCount()));
        assertEquals("134M", SyntheticModel.sizeLabel(SyntheticSpec.SMALL_125M.parameterCount()));
        assertEquals("5.2M", SyntheticModel.sizeLabel(5_245_184));
    }

    @Test
    void cacheGeneratesOnceUnderAnEncodedNameAndLeavesNoTemporaries() throws Exception {
        SyntheticModelCache cache = new SyntheticModelCache(dir.resolve("cache"));
        SyntheticModel m = SyntheticModel.of(MICRO, GgmlType.Q4_0, 9);
        int[] calls = {0};
        Path p = cache.get(m, SyntheticFormat.GGUF, (s, d, t) -> calls[0]++);
        assertEquals("micro-q4_0-s9-v" + SyntheticModel.FORMAT_VERSION + ".gguf", p.getFileName().toString());
        assertTrue(calls[0] > 0);
        long modified = Files.getLastModifiedTime(p).toMillis();
        calls[0] = 0;
        assertEquals(p, cache.get(m, SyntheticFormat.GGUF, (s, d, t) -> calls[0]++));
        assertEquals(0, calls[0]);
        assertEquals(modified, Files.getLastModifiedTime(p).toMillis());

        SyntheticModel hfModel = SyntheticModel.of(MICRO, GgmlType.F16, 9);
        Path hf = cache.get(hfModel, SyntheticFormat.HF, (s, d, t) -> {});
        assertTrue(hf.getFileName().toString().endsWith("-hf"));
        assertTrue(Files.isRegularFile(hf.resolve("model.safetensors")));
        try (var files = Files.list(cache.directory())) {
            assertEquals(List.of(hf.getFileName().toString(), p.getFileName().toString()),
                    files.map(f -> f.getFileName().toString()).sorted().toList());
        }
        SyntheticSpec custom = MICRO.toBuilder().numLayers(1).build();
        String name = SyntheticModel.of(custom, GgmlType.F32, 9).fileName(SyntheticFormat.GGUF);
        assertTrue(name.matches("micro-[0-9a-f]{8}-f32-s9-v\\d+\\.gguf"), name);
    }

    @Test
    void tiedSpecHasNoOutputTensor() {
        SyntheticSpec tied = MICRO.toBuilder().name("microtied").tiedEmbeddings(true).build();
        Path p = dir.resolve("tied.gguf");
        SyntheticModel.of(tied, GgmlType.F32, 1).writeGguf(p, (s, d, t) -> {});
        try (GgufModelSource src = GgufModelSource.open(p)) {
            assertTrue(src.config().tieWordEmbeddings());
            assertNull(src.tensors().get("output.weight"));
        }
    }

    private static float[] floats(TensorData t) {
        MemorySegment s = t.data();
        float[] out = new float[(int) t.elementCount()];
        switch (t.type()) {
            case F32 -> MemorySegment.copy(s, F32, 0, out, 0, out.length);
            case F16 -> { for (int i = 0; i < out.length; i++) out[i] = Float.float16ToFloat(s.get(F16, 2L * i)); }
            default -> throw new IllegalArgumentException(t.type().toString());
        }
        return out;
    }
}
