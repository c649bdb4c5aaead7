package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.gguf.GgufWriter;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GgufQuantizer beyond the fixtures: F16 input, bad inputs, and the core decoders on llama-quantize's own blocks. */
class GgufQuantizerTest {
    @TempDir Path tmp;

    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static float[] floats(TensorData t) {
        float[] x = new float[(int) t.elementCount()];
        MemorySegment.copy(t.data(), F, 0, x, 0, x.length);
        return x;
    }

    /** The new decoders read what llama-quantize wrote: every Q2_K..Q6_K tensor of the fixtures decodes close to the F32 weights. */
    @Test
    void coreDecodersReadLlamaQuantizeBlocks() {
        Map<GgmlType, Double> bound = Map.of(GgmlType.Q2_K, 0.45, GgmlType.Q3_K, 0.2, GgmlType.Q4_K, 0.1, GgmlType.Q5_K, 0.05, GgmlType.Q6_K, 0.025);
        try (GgufFile f32 = GgufFile.open(Fixtures.brownGguf("f32"));
             GgufFile q2 = GgufFile.open(Fixtures.file("brown-llama/imatrix/gguf/brown-llama-q2_K.gguf"));
             GgufFile q5 = GgufFile.open(Fixtures.file("brown-llama/imatrix/gguf/brown-llama-q5_K_M.gguf"))) {
            int checked = 0;
            for (GgufFile q : List.of(q2, q5)) {
                for (TensorData t : q.tensors().values()) {
                    if (!bound.containsKey(t.type())) continue;
                    float[] x = floats(f32.tensor(t.name()));
                    double rel = Decode.relRms(x, Decode.decode(t.type(), t.data(), x.length));
                    assertTrue(rel < bound.get(t.type()), t + ": relative rms error " + rel);
                    checked++;
                }
            }
            assertEquals(60, checked);
        }
    }

    @Test
    void f16InputQuantizesItsRoundedValues() throws IOException {
        Path f32 = Fixtures.brownGguf("f32");
        Path f16 = tmp.resolve("f16.gguf");
        try (GgufFile in = GgufFile.open(f32)) {
            GgufWriter w = new GgufWriter();
            in.metadata().forEach(w::put);
            for (TensorData t : in.tensors().values()) {
                if (t.shape().length < 2) {
                    w.addTensor(t);
                    continue;
                }
                float[] x = floats(t);
                byte[] h = new byte[x.length * 2];
                for (int i = 0; i < x.length; i++) {
                    short s = Float.floatToFloat16(x[i]);
                    h[2 * i] = (byte) s;
                    h[2 * i + 1] = (byte) (s >> 8);
                }
                w.addTensor(t.name(), GgmlType.F16, t.shape(), h);
            }
            w.write(f16);
        }
        Path out = tmp.resolve("q4km.gguf");
        List<GgufQuantizer.TensorPlan> plan = new GgufQuantizer(GgufPreset.Q4_K_M).quantize(f16, out);
        assertEquals(39, plan.size());
        try (GgufFile src = GgufFile.open(f16); GgufFile q = GgufFile.open(out)) {
            assertEquals(15, q.getInt("general.file_type"));
            TensorData t = q.tensor("blk.1.attn_q.weight");
            assertEquals(GgmlType.Q4_K, t.type());
            TensorData h = src.tensor("blk.1.attn_q.weight");
            float[] x = new float[(int) h.elementCount()];
            for (int i = 0; i < x.length; i++) x[i] = Float.float16ToFloat(h.data().get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * i));
            byte[] want = new byte[(int) GgmlType.Q4_K.bytesFor(x.length)];
            BlockQuantizer.of(GgmlType.Q4_K).quantize(x, 0, 256, 256, null, want, 0);
            assertArrayEquals(want, t.data().toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private static void assertNoOutput(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> files = s.filter(p -> p.getFileName().toString().startsWith("out")).toList();
            assertEquals(List.of(), files, "nothing is left under the output name or as a temporary file");
        }
    }

    @Test
    void badInputsFailClearlyAndLeaveNoFile() throws IOException {
        Path out = tmp.resolve("out.gguf");
        // a quantized input
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GgufQuantizer(GgufPreset.Q4_0).quantize(Fixtures.brownGguf("q8_0"), out));
        assertTrue(e.getMessage().contains("is Q8_0: requantizing"), e.getMessage());
        // Q2_K_S needs an importance matrix
        e = assertThrows(IllegalArgumentException.class, () -> new GgufQuantizer(GgufPreset.Q2_K_S).quantize(Fixtures.brownGguf("f32"), out));
        assertTrue(e.getMessage().contains("Missing importance matrix for tensor"), e.getMessage());
        // an imatrix whose rows do not fit the model
        byte[] wrong = ImatrixFileTest.imatrix(new Object[][] {{"blk.0.attn_q.weight", 1, new float[128]}}, null, null);
        ImatrixFile m = ImatrixFile.parse(tmp.resolve("wrong.imatrix"), wrong);
        e = assertThrows(IllegalArgumentException.class, () -> new GgufQuantizer(GgufPreset.Q4_K_M).imatrix(m).quantize(Fixtures.brownGguf("f32"), out));
        assertTrue(e.getMessage().contains("imatrix size 128 is different from tensor size 256 for blk.0.attn_q.weight"), e.getMessage());
        // not a GGUF file
        Path junk = tmp.resolve("junk.gguf");
        Files.write(junk, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        assertThrows(io.modelopt.core.ModelFormatException.class, () -> new GgufQuantizer(GgufPreset.Q8_0).quantize(junk, out));
        assertNoOutput(tmp);
        assertFalse(Files.exists(out));
    }

    @Test
    void planListsTypesWithoutWriting() {
        try (GgufFile in = GgufFile.open(Fixtures.brownGguf("f32"))) {
            List<GgufQuantizer.TensorPlan> plan = new GgufQuantizer(GgufPreset.Q3_K_M).plan(in);
            assertEquals("output.weight", plan.get(0).name(), "non-layer tensors first, then by name");
            Map<String, GgmlType> t = plan.stream().collect(java.util.stream.Collectors.toMap(GgufQuantizer.TensorPlan::name, GgufQuantizer.TensorPlan::type));
            assertEquals(GgmlType.Q6_K, t.get("output.weight"));
            assertEquals(GgmlType.Q3_K, t.get("token_embd.weight"));
            assertEquals(GgmlType.Q5_K, t.get("blk.0.attn_v.weight"));
            assertEquals(GgmlType.Q4_K, t.get("blk.3.attn_v.weight"));
            assertEquals(GgmlType.Q4_K, t.get("blk.2.attn_output.weight"));
            assertEquals(GgmlType.Q4_K, t.get("blk.2.ffn_down.weight"));
            assertEquals(GgmlType.Q3_K, t.get("blk.2.ffn_up.weight"));
            assertEquals(GgmlType.F32, t.get("blk.2.ffn_norm.weight"));
        }
    }

    /** A one-layer Llama whose rows (96, 160) are multiples of 32 but not of 256: every k-quant falls back. */
    private Path smallLlama() {
        GgufWriter w = new GgufWriter();
        w.putString("general.architecture", "llama").putUInt32("llama.block_count", 1)
                .putUInt32("llama.attention.head_count", 2).putUInt32("llama.attention.head_count_kv", 2);
        java.util.Random r = new java.util.Random(1);
        Object[][] tensors = {
                {"token_embd.weight", new long[] {96, 64}}, {"output.weight", new long[] {96, 64}}, {"output_norm.weight", new long[] {96}},
                {"blk.0.attn_norm.weight", new long[] {96}}, {"blk.0.attn_q.weight", new long[] {96, 96}}, {"blk.0.attn_k.weight", new long[] {96, 96}},
                {"blk.0.attn_v.weight", new long[] {96, 96}}, {"blk.0.attn_output.weight", new long[] {96, 96}}, {"blk.0.ffn_norm.weight", new long[] {96}},
                {"blk.0.ffn_gate.weight", new long[] {96, 160}}, {"blk.0.ffn_up.weight", new long[] {96, 160}}, {"blk.0.ffn_down.weight", new long[] {160, 96}}};
        for (Object[] t : tensors) {
            long[] d = (long[]) t[1];
            int n = (int) TensorData.elementCount(d);
            MemorySegment m = MemorySegment.ofArray(new byte[4 * n]);
            for (int i = 0; i < n; i++) m.set(F, 4L * i, (float) (r.nextGaussian() * 0.05));
            w.addTensor((String) t[0], GgmlType.F32, d, m);
        }
        Path p = tmp.resolve("small.gguf");
        w.write(p);
        return p;
    }

    @Test
    void rowsNotDivisibleBy256UseTheFallbackTypes() {
        Path in = smallLlama();
        Path out = tmp.resolve("small-q3km.gguf");
        new GgufQuantizer(GgufPreset.Q3_K_M).quantize(in, out);
        Map<String, GgmlType> want = Map.of("token_embd.weight", GgmlType.IQ4_NL, "output.weight", GgmlType.Q8_0,
                "blk.0.attn_q.weight", GgmlType.IQ4_NL, "blk.0.attn_v.weight", GgmlType.Q5_1, "blk.0.attn_output.weight", GgmlType.Q5_0,
                "blk.0.ffn_down.weight", GgmlType.Q5_0, "blk.0.ffn_up.weight", GgmlType.IQ4_NL, "blk.0.attn_norm.weight", GgmlType.F32);
        try (GgufFile src = GgufFile.open(in); GgufFile q = GgufFile.open(out)) {
            want.forEach((name, type) -> assertEquals(type, q.tensor(name).type(), name));
            for (TensorData t : q.tensors().values()) {
                if (!t.type().isQuantized()) continue;
                float[] x = floats(src.tensor(t.name()));
                double rel = Decode.relRms(x, Decode.decode(t.type(), t.data(), x.length));
                assertTrue(rel < 0.12, t + ": relative rms error " + rel);
            }
        }
        // Q8_0 has no fallback: 96 fits, but the error names the tensor for a row of 100
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TensorTypePolicy(GgufPreset.Q4_0,
                new TensorTypePolicy.ModelShape("llama", 1, 2, 2, 0), false, true, 1).typeFor("blk.0.attn_q.weight", new long[] {100, 96}));
        assertTrue(e.getMessage().contains("tensor blk.0.attn_q.weight: 100 columns"), e.getMessage());
    }
}
