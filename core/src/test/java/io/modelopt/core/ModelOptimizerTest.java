package io.modelopt.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.eval.Perplexity;
import io.modelopt.core.eval.WindowProtocol;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fluent facade end to end on the fixture models. */
class ModelOptimizerTest {

    @Test
    void describeListsArchitectureTensorsAndTokenizer() throws Exception {
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.brownGguf("q4_K_M"))) {
            ModelDescription d = m.describe();
            assertEquals(39, d.tensors().size());
            assertEquals(5_245_184, d.parameterCount());
            // Tensor bytes are the file minus its header (metadata incl. a 4096-token vocabulary, tensor infos).
            long fileSize = Files.size(d.path());
            assertTrue(d.totalBytes() < fileSize && d.totalBytes() > fileSize - 200_000, d.totalBytes() + " of " + fileSize);
            assertEquals(d.totalBytes(), d.bytesByType().values().stream().mapToLong(Long::longValue).sum());
            String text = d.toString();
            assertTrue(text.contains("LlamaForCausalLM"), text);
            assertTrue(text.contains("hidden 256, layers 4, heads 8 (kv heads 4, head dim 32), ffn 768, vocab 4096, context 256"), text);
            assertTrue(text.contains("blk.2.attn_v.weight"), text);
            assertTrue(text.contains("Q6_K"), text);
            assertTrue(d.tokenizer().contains("4096"), d.tokenizer());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void buildThenGenerateGreedyMatchesLlamaCpp() throws Exception {
        Map<String, Object> ref = Json.parseObject(Files.readString(Fixtures.file("stories260K/reference.json")));
        Map<String, Object> first = (Map<String, Object>) ((List<Object>) ref.get("prompts")).getFirst();
        String expected = (String) ((Map<String, Object>) first.get("llama_cpp")).get("gen_text");
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesHf()).withKvCache(KvDtype.F32).withThreads(2).build()) {
            assertEquals(expected, model.generate((String) first.get("prompt"), 48));
        }
    }

    @Test
    void aKvBudgetBecomesExactBlocksOrFailsTheBuild() {
        // stories260K: 5 layers, 4 KV heads x 8; INT8 block of 16 = 2 x 5 x 4 x 16 x (8 + 4 scale bytes) = 7,680 bytes
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withKvCache(KvDtype.INT8).withKvBudget("64MiB").withThreads(2).build()) {
            assertEquals((64 << 20) / 7680, model.kvPlan().orElseThrow().numBlocks());
            assertTrue(model.kvSummary().contains("int8") && model.kvSummary().contains("480 bytes/token"), model.kvSummary());
            assertTrue(model.generate("Once upon a time", 8).length() > 0, "runs with INT8 KV");
        }
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.storiesGguf("f32"))) {
            var e = assertThrows(IllegalArgumentException.class, () -> m.withKvBudget("64KiB").withThreads(2).build());
            assertTrue(e.getMessage().contains("65,536 bytes") && e.getMessage().contains("maximum length") && e.getMessage().contains("int8"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> m.withKvBlockSize(48));
        }
    }

    @Test
    void perplexityThroughTheFacadeMatchesLlamaCpp() throws Exception {
        String text = Files.readString(Fixtures.file("corpora/brown/fiction-test.txt"));
        try (OptimizedModel model = ModelOptimizer.load(Fixtures.storiesGguf("f32")).withThreads(2).build()) {
            Perplexity.Result r = model.perplexity(text, WindowProtocol.llamaCpp(128, model.tokenizer().addsBos() ? model.tokenizer().bosId() : -1), ProgressListener.NONE);
            assertEquals(24.6898, r.perplexity(), 24.6898 * 1e-3, r.toString()); // perplexity.md, F16 KV cache
            assertEquals(18_459, r.tokensScored());
        }
    }

    @Test
    void quantizeWithoutTheQuantizationModuleSaysWhatIsMissing() {
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.storiesGguf("f32"))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> m.quantize(QuantizationSpec.awq().build()));
            assertTrue(e.getMessage().contains("modelopt-quantization") && e.getMessage().contains("'awq'"), e.getMessage());
            e = assertThrows(IllegalStateException.class, () -> m.quantize(QuantizationSpec.RTN_INT4));
            assertTrue(e.getMessage().contains("'rtn'"), e.getMessage());
            assertThrows(IllegalStateException.class, m::quantizationPlan);
        }
    }

    @Test
    void exportWithoutAnExporterNamesTheFormats() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> OptimizedModel.exporter("awq"));
        assertTrue(e.getMessage().contains("'awq'") && e.getMessage().contains("compressed-tensors"), e.getMessage());
    }

    @Test
    void describeReportsBitsPerWeight() {
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.brownGguf("q8_0"))) {
            ModelDescription d = m.describe();
            // Q8_0 is 34 bytes per 32 weights; the norms stay F32 (the linears alone are exactly 8.5).
            assertEquals(8.5, d.blockLinearBitsPerWeight(), 1e-9);
            assertTrue(d.bitsPerWeight() > 8.5 && d.bitsPerWeight() < 8.6, String.valueOf(d.bitsPerWeight()));
            assertTrue(d.toString().contains("8.500 block linears"), d.toString());
        }
    }

    @Test
    void notAModelIsAFormatError(@TempDir Path dir) throws Exception {
        Path junk = Files.writeString(dir.resolve("junk.bin"), "definitely not a model");
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> ModelOptimizer.load(junk));
        assertTrue(e.getMessage().contains("junk.bin"), e.getMessage());
        assertThrows(java.io.UncheckedIOException.class, () -> ModelOptimizer.load(dir.resolve("missing.gguf")));
        Files.createDirectory(dir.resolve("empty"));
        assertThrows(ModelFormatException.class, () -> ModelOptimizer.load(dir.resolve("empty")));
    }
}
