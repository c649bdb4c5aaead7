package io.modelopt.quantization.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelDescription;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-memory quantizer end to end through {@code ModelOptimizer}: brown-llama F32 quantized to
 * INT8 per channel and INT4 g128, run on the CPU backend, perplexity close to F32's; q8_0 in
 * memory exported as GGUF is llama-quantize's file byte for byte.
 */
class RtnModelQuantizerTest {
    private static String text;
    private static double f32Perplexity;

    @TempDir Path tmp;

    @BeforeAll
    static void baseline() throws Exception {
        String all = Files.readString(Fixtures.file("corpora/brown/test.txt"));
        text = all.substring(0, 6_000);
        f32Perplexity = perplexity(ModelOptimizer.load(Fixtures.brownGguf("f32")));
    }

    private static double perplexity(ModelOptimizer m) {
        try (OptimizedModel model = m.withThreads(2).build()) {
            Perplexity.Result r = model.perplexity(text, WindowProtocol.llamaCpp(128, model.tokenizer().addsBos() ? model.tokenizer().bosId() : -1),
                    ProgressListener.NONE);
            assertTrue(Double.isFinite(r.perplexity()), r.toString());
            return r.perplexity();
        }
    }

    @Test
    void int4G128RunsWithPerplexityCloseToF32() {
        List<String> stages = new ArrayList<>();
        double p = perplexity(ModelOptimizer.load(Fixtures.brownGguf("f32"))
                .withProgress((stage, done, total) -> stages.add(stage))
                .quantize(QuantizationSpec.int4().groupSize(128).build()));
        // measured: F32 147.996, INT4 g128 148.562 (+0.38%), INT8 147.988 (819 tokens)
        assertTrue(Math.abs(p / f32Perplexity - 1) < 0.02, "INT4 g128 " + p + " vs F32 " + f32Perplexity);
        assertTrue(stages.contains("quantize 1/39 token_embd.weight") || stages.getFirst().startsWith("quantize 1/39"), stages.toString());
        assertEquals("quantize", stages.getLast());
    }

    @Test
    void int8PerChannelRunsWithPerplexityCloseToF32() {
        double p = perplexity(ModelOptimizer.load(Fixtures.brownGguf("f32")).quantize(QuantizationSpec.RTN_INT8));
        assertTrue(Math.abs(p / f32Perplexity - 1) < 0.002, "INT8 " + p + " vs F32 " + f32Perplexity);
    }

    @Test
    void describeShowsEachWeightsFormatAndBitsPerWeight() {
        try (OptimizedModel m = ModelOptimizer.load(Fixtures.brownGguf("f32")).withThreads(1).quantize(QuantizationSpec.RTN_INT4).build()) {
            ModelDescription d = m.describe();
            // 4-bit codes + an F16 scale and a 4-bit zero point per 128 weights
            assertEquals(4 + 16.0 / 128 + 4.0 / 128, d.blockLinearBitsPerWeight(), 1e-9);
            assertEquals(QuantizationSpec.RTN_INT4.toString() + "; ", ((String) m.source().metadata().get("modelopt.quantization")).substring(0,
                    QuantizationSpec.RTN_INT4.toString().length() + 2));
            ModelDescription.Tensor q = d.tensors().stream().filter(t -> t.name().equals("blk.0.attn_q.weight")).findFirst().orElseThrow();
            assertEquals("INT4_G128_ASYM", q.weightFormat());
            assertEquals(256L * 256, q.parameters());
            assertEquals(5_245_184, d.parameterCount(), "parts count no parameters; packed codes count as their logical weights");
            String s = d.toString();
            assertTrue(s.contains("blk.0.attn_q.weight_scale") && s.contains("part") && s.contains("4.156 block linears"), s);
        }
    }

    @Test
    void q8_0InMemoryExportsLlamaQuantizesFile() throws Exception {
        Path out = tmp.resolve("q8_0.gguf");
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.brownGguf("f32")).quantize(QuantizationSpec.gguf("q8_0").build());
             ModelSource q = m.quantizeToSource()) {
            new GgufModelExporter().export(q, out, ProgressListener.NONE);
        }
        assertEquals(-1, Files.mismatch(out, Fixtures.brownGguf("q8_0")), "same bytes as llama-quantize f32 out Q8_0");
    }

    @Test
    void ggufRefusesOurIntFormatsNamingTheFormatsThatHoldThem() throws Exception {
        try (OptimizedModel m = ModelOptimizer.load(Fixtures.brownGguf("f32")).withThreads(1).quantize(QuantizationSpec.RTN_INT8).build()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.export(tmp.resolve("x.gguf"), "gguf"));
            assertTrue(e.getMessage().contains("INT8_CHANNEL_SYM") && e.getMessage().contains("compressed-tensors"), e.getMessage());
            assertTrue(!Files.exists(tmp.resolve("x.gguf")));
        }
    }

    @Test
    void stories260KAtGroup32RunsWithItsFfnDownAtInt8() throws Exception {
        try (OptimizedModel m = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withThreads(1)
                .quantize(QuantizationSpec.int4().groupSize(32).build()).build()) {
            ModelDescription d = m.describe();
            assertEquals("INT8_CHANNEL_SYM", d.tensors().stream().filter(t -> t.name().equals("blk.0.ffn_down.weight")).findFirst().orElseThrow().weightFormat());
            String g = m.generate("Once upon a time", 16);
            assertTrue(!g.isBlank(), g);
        }
    }

    @Test
    void aHuggingFaceDirectoryQuantizesAndKeepsItsTensorNames() {
        try (OptimizedModel m = ModelOptimizer.load(Fixtures.storiesHf()).withThreads(1).quantize(QuantizationSpec.RTN_INT8).build()) {
            ModelDescription.Tensor q = m.describe().tensors().stream().filter(t -> t.name().equals("blk.0.attn_q.weight")).findFirst().orElseThrow();
            assertEquals("INT8_CHANNEL_SYM", q.weightFormat());
            assertEquals("model.layers.0.self_attn.q_proj.weight", q.fileName());
            assertTrue(!m.generate("Once upon a time", 8).isBlank());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.export(tmp.resolve("s.gguf"), "gguf"));
            assertTrue(e.getMessage().contains("read from a GGUF file"), e.getMessage());
        }
    }

    @Test
    void anAlreadyQuantizedInputIsRefused() {
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.brownGguf("q4_0")).quantize(QuantizationSpec.RTN_INT4)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, m::build);
            assertTrue(e.getMessage().contains("already quantized") && e.getMessage().contains("Q4_0"), e.getMessage());
        }
    }
}
