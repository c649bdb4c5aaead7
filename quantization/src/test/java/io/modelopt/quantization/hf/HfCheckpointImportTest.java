package io.modelopt.quantization.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.json.Json;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.TensorNames;
import io.modelopt.core.model.WeightBinders;
import io.modelopt.core.safetensors.SafetensorsDType;
import io.modelopt.core.safetensors.SafetensorsWriter;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntBinder;
import io.modelopt.quantization.format.PackedIntTensors;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * AWQ and GPTQ checkpoints of brown-llama's shapes, packed here in the authors' layout (their
 * Python loops, transcribed), open through {@link ModelOptimizer#load} and match: decoded weights
 * equal the packed values, forward logits equal those of an in-memory model of the same codes in
 * our own layout. Export → import → forward gives identical logits for every exporter. Corrupt
 * checkpoints name the tensor.
 */
class HfCheckpointImportTest {
    @TempDir Path tmp;

    static final String[] LINEARS = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
    static final int[] PROMPT = {1, 15, 300, 7, 42, 1000, 5};

    /** The fixture's tensors with every block linear replaced by {@code codes} in PackedIntLayout. */
    static final class InMemory implements ModelSource {
        final HfModelSource base;
        final Map<String, TensorData> tensors = new LinkedHashMap<>();
        final Map<String, Object> metadata = new LinkedHashMap<>();
        final Map<String, LogicalWeight> codes = new LinkedHashMap<>();
        final Arena arena = Arena.ofShared();

        InMemory(HfModelSource base, IntScheme scheme) {
            this.base = base;
            metadata.putAll(base.metadata());
            ModelConfig c = base.config();
            tensors.putAll(base.tensors());
            long seed = 100;
            for (int i = 0; i < c.numLayers(); i++) {
                for (String l : LINEARS) {
                    String name = "blk." + i + "." + l + ".weight";
                    int[] io = HfQuantizedBinder.inOut(c, name);
                    LogicalWeight w = HfLayoutsTest.random(scheme, io[1], io[0], seed++, 1);
                    codes.put(name, w);
                    PackedIntTensors p = PackedIntTensors.allocate(name, scheme, io[1], io[0], arena);
                    IntRow r = new IntRow(scheme, io[0]);
                    for (int o = 0; o < io[1]; o++) {
                        for (int k = 0; k < io[0]; k++) r.codes[k] = w.code(o, k);
                        System.arraycopy(w.scales(), o * w.groups(), r.scales, 0, w.groups());
                        System.arraycopy(w.zeros(), o * w.groups(), r.zeros, 0, w.groups());
                        p.writeRow(o, r);
                    }
                    tensors.remove(name);
                    for (TensorData t : p.tensors()) tensors.put(t.name(), t);
                    metadata.put(PackedIntBinder.metadataKey(name), scheme.formatName());
                }
            }
        }

        @Override public Path path() { return base.path(); }
        @Override public String format() { return "huggingface"; }
        @Override public ModelConfig config() { return base.config(); }
        @Override public Tokenizer tokenizer() { return base.tokenizer(); }
        @Override public Map<String, TensorData> tensors() { return tensors; }
        @Override public Map<String, Object> metadata() { return metadata; }
        @Override public String fileTensorName(String canonicalName) { return base.fileTensorName(canonicalName); }
        @Override public void close() { arena.close(); base.close(); }
    }

    static float[] logits(ModelSource s) {
        RunnerOptions o = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(16).build();
        try (ModelRunner r = CpuLlamaRunner.load(s, o); KvCache cache = r.newKvCache()) {
            Logits l = r.forward(Batch.ofSequence(0, 0, PROMPT, true), cache);
            float[] all = new float[l.rows() * l.vocabSize()];
            for (int i = 0; i < l.rows(); i++) l.copyRow(i, all, i * l.vocabSize());
            return all;
        }
    }

    /** Writes an HF dir: the fixture's config plus {@code qc}, its tokenizer files, its other tensors, and {@code linear} per block linear. */
    Path checkpoint(String name, InMemory m, Map<String, Object> qc, Consumer<Object[]> linear) throws Exception {
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        Path src = m.base.path();
        Map<String, Object> config = new LinkedHashMap<>(Json.parseObject(Files.readString(src.resolve("config.json"))));
        config.put("quantization_config", qc);
        Files.writeString(dir.resolve("config.json"), Json.writePretty(config));
        for (String f : List.of("tokenizer.json", "tokenizer_config.json", "tokenizer.model")) {
            if (Files.exists(src.resolve(f))) Files.copy(src.resolve(f), dir.resolve(f));
        }
        SafetensorsWriter w = new SafetensorsWriter();
        for (Map.Entry<String, TensorData> e : m.base.tensors().entrySet()) {
            if (m.codes.containsKey(e.getKey())) continue;
            w.add(m.base.fileTensorName(e.getKey()), e.getValue());
        }
        for (Map.Entry<String, LogicalWeight> e : m.codes.entrySet()) {
            String hf = TensorNames.toHf(e.getKey()).orElseThrow();
            linear.accept(new Object[] {w, hf.substring(0, hf.length() - ".weight".length()), e.getValue()});
        }
        w.write(dir.resolve("model.safetensors"));
        return dir;
    }

    static MemorySegment ints(int[] v) {
        MemorySegment s = MemorySegment.ofArray(new byte[4 * v.length]);
        for (int i = 0; i < v.length; i++) s.set(Words.I32, 4L * i, v[i]);
        return s;
    }

    static MemorySegment f16ByGroup(LogicalWeight w) {
        MemorySegment s = MemorySegment.ofArray(new byte[2 * w.scales().length]);
        for (int g = 0; g < w.groups(); g++) for (int o = 0; o < w.rows(); o++) s.set(Words.I16, 2L * (g * w.rows() + o), Float.floatToFloat16(w.scales()[o * w.groups() + g]));
        return s;
    }

    /** AutoAWQ WQLinear_GEMM.from_linear: qweight[:, col] |= intweight[:, col*8 + order_map[i]] << (i*4), intweight [in, out]; zeros alike. */
    static void awqLinear(Object[] a) {
        SafetensorsWriter w = (SafetensorsWriter) a[0];
        String module = (String) a[1];
        LogicalWeight lw = (LogicalWeight) a[2];
        int in = lw.cols(), out = lw.rows(), groups = lw.groups();
        int[] orderMap = {0, 2, 4, 6, 1, 3, 5, 7};
        int[] qweight = new int[in * out / 8], qzeros = new int[groups * out / 8];
        for (int col = 0; col < out / 8; col++) {
            for (int i = 0; i < 8; i++) {
                for (int k = 0; k < in; k++) qweight[k * (out / 8) + col] |= lw.code(col * 8 + orderMap[i], k) << (i * 4);
                for (int g = 0; g < groups; g++) qzeros[g * (out / 8) + col] |= lw.zeros()[(col * 8 + orderMap[i]) * groups + g] << (i * 4);
            }
        }
        w.add(module + ".qweight", SafetensorsDType.I32, new long[] {in, out / 8}, ints(qweight));
        w.add(module + ".qzeros", SafetensorsDType.I32, new long[] {groups, out / 8}, ints(qzeros));
        w.add(module + ".scales", SafetensorsDType.F16, new long[] {groups, out}, f16ByGroup(lw));
    }

    /** AutoGPTQ QuantLinear.pack (4-bit): qweight[row] |= intweight[j] << (bits*(j-i)); zeros -= 1; qzeros[:, col] |= zeros[:, j] << (bits*(j-i)). */
    static void gptqLinear(Object[] a, int[] gIdxOverride) {
        SafetensorsWriter w = (SafetensorsWriter) a[0];
        String module = (String) a[1];
        LogicalWeight lw = (LogicalWeight) a[2];
        int bits = 4, in = lw.cols(), out = lw.rows(), groups = lw.groups();
        int[] qweight = new int[in / 8 * out], qzeros = new int[groups * out / 8], gIdx = new int[in];
        for (int row = 0, i = 0; row < in / 8; row++, i += 8) {
            for (int j = i; j < i + 8; j++) for (int o = 0; o < out; o++) qweight[row * out + o] |= lw.code(o, j) << (bits * (j - i));
        }
        for (int col = 0, i = 0; col < out / 8; col++, i += 8) {
            for (int j = i; j < i + 8; j++) for (int g = 0; g < groups; g++) qzeros[g * (out / 8) + col] |= (lw.zeros()[j * groups + g] - 1) << (bits * (j - i));
        }
        for (int k = 0; k < in; k++) gIdx[k] = k / lw.groupSize();
        if (gIdxOverride != null && module.equals("model.layers.0.self_attn.q_proj")) gIdx[gIdxOverride[0]] = gIdxOverride[1];
        w.add(module + ".qweight", SafetensorsDType.I32, new long[] {in / 8, out}, ints(qweight));
        w.add(module + ".qzeros", SafetensorsDType.I32, new long[] {groups, out / 8}, ints(qzeros));
        w.add(module + ".scales", SafetensorsDType.F16, new long[] {groups, out}, f16ByGroup(lw));
        w.add(module + ".g_idx", SafetensorsDType.I32, new long[] {in}, ints(gIdx));
    }

    static Map<String, Object> awqConfig(int group) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("quant_method", "awq");
        m.put("zero_point", true);
        m.put("group_size", group);
        m.put("bits", 4);
        m.put("version", "gemm");
        m.put("modules_to_not_convert", null);
        return m;
    }

    static Map<String, Object> gptqConfig(boolean sym) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bits", 4);
        m.put("group_size", 128);
        m.put("desc_act", false);
        m.put("sym", sym);
        m.put("quant_method", "gptq");
        m.put("checkpoint_format", "gptq");
        return m;
    }

    void assertMatches(Path dir, InMemory m, String formatPrefix) {
        float[] expected = logits(m);
        try (ModelOptimizer opt = ModelOptimizer.load(dir)) {
            ModelSource s = opt.source();
            for (Map.Entry<String, LogicalWeight> e : m.codes.entrySet()) {
                WeightMatrix w = WeightBinders.bind(s, e.getKey());
                assertTrue(w.format().name().startsWith(formatPrefix), w.format().name());
                LogicalWeight lw = e.getValue();
                float[] row = new float[lw.cols()];
                for (int o = 0; o < lw.rows(); o += 37) {
                    w.dequantizeRow(o, row, 0);
                    for (int k = 0; k < lw.cols(); k++) {
                        int g = k / lw.groupSize();
                        assertEquals(lw.scales()[o * lw.groups() + g] * (lw.code(o, k) - lw.zeros()[o * lw.groups() + g]), row[k], e.getKey() + " " + o + "," + k);
                    }
                }
            }
            assertArrayEquals(expected, logits(s), "logits of the imported checkpoint vs the in-memory model of the same codes");
            // evaluate's bits per weight count the imported linears (their main tensors are qweight / weight_packed)
            double imported = io.modelopt.core.eval.WeightStats.of(s).blockLinearBitsPerWeight(), inMemory = io.modelopt.core.eval.WeightStats.of(m).blockLinearBitsPerWeight();
            assertTrue(imported > 0 && Math.abs(imported - inMemory) < 0.1, "block-linear bits per weight: imported " + imported + ", in memory " + inMemory);
        }
    }

    @Test void awqCheckpointInAutoAwqLayoutImportsAndMatches() throws Exception {
        try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(4, 128, false))) {
            assertMatches(checkpoint("awq", m, awqConfig(128), HfCheckpointImportTest::awqLinear), m, "AWQ_GEMM_INT4_G128_ASYM");
        }
    }

    @Test void gptqCheckpointInAutoGptqLayoutImportsAndMatches() throws Exception {
        for (boolean sym : new boolean[] {true, false}) {
            try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(4, 128, sym))) {
                assertMatches(checkpoint("gptq-" + sym, m, gptqConfig(sym), a -> gptqLinear(a, null)), m, "GPTQ_INT4_G128_" + (sym ? "SYM" : "ASYM"));
            }
        }
    }

    @Test void exportThenImportGivesIdenticalLogits() {
        for (String format : List.of("awq", "gptq", "compressed-tensors")) {
            try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(4, 128, false))) {
                Path out = tmp.resolve("export-" + format);
                io.modelopt.core.OptimizedModel.exporter(format).export(m, out, null);
                assertTrue(Files.exists(out.resolve("tokenizer.json")), "tokenizer copied");
                assertMatches(out, m, switch (format) {
                    case "awq" -> "AWQ_GEMM_";
                    case "gptq" -> "GPTQ_";
                    default -> "CT_PACKED_";
                });
            }
        }
    }

    /** INT8 per channel goes out as compressed-tensors int-quantized (an I8 `weight` kept under its canonical name) and back. */
    @Test void int8ExportsAsIntQuantizedAndImports() {
        try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.int8())) {
            Path out = tmp.resolve("export-int8");
            io.modelopt.core.OptimizedModel.exporter("compressed-tensors").export(m, out, null);
            assertMatches(out, m, "CT_INT_");
        }
    }

    @Test void awqShapesThatDisagreeWithConfigNameTheTensor() throws Exception {
        try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(4, 128, false))) {
            Path dir = checkpoint("awq-bad", m, awqConfig(64), HfCheckpointImportTest::awqLinear);
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> ModelOptimizer.load(dir).close());
            assertTrue(e.getMessage().contains("model.layers.0.self_attn.q_proj.qzeros") && e.getMessage().contains("implies [4, 32]"), e.getMessage());
        }
    }

    @Test void gptqGIdxOutOfRangeNamesTheTensor() throws Exception {
        try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(4, 128, true))) {
            Path dir = checkpoint("gptq-bad", m, gptqConfig(true), a -> gptqLinear(a, new int[] {5, 99}));
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> ModelOptimizer.load(dir).close());
            assertTrue(e.getMessage().contains("model.layers.0.self_attn.q_proj.g_idx") && e.getMessage().contains("g_idx[5] = 99"), e.getMessage());
        }
    }

    @Test void int3IsRefusedByAwqWithTheFormatsThatCan() {
        try (InMemory m = new InMemory(HfModelSource.open(Fixtures.brownHf()), IntScheme.of(3, 128, false))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> io.modelopt.core.OptimizedModel.exporter("awq").export(m, tmp.resolve("int3"), null));
            assertTrue(e.getMessage().contains("awq cannot hold blk.0.attn_q.weight (INT3_G128_ASYM)") && e.getMessage().contains("formats that can"), e.getMessage());
            assertTrue(!Files.exists(tmp.resolve("int3")));
        }
    }
}
