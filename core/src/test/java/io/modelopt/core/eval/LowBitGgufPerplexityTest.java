package io.modelopt.core.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The k-quant presets llama-quantize made of brown-llama (fixtures' imatrix/README.md) run here,
 * their Q2_K/Q3_K tensors through the registry's decode-then-multiply kernel, and score llama.cpp's
 * perplexity on test.txt (c = 256). Our products use the F32 activations where llama.cpp quantizes
 * them to Q8_K, so the match is within 0.2%, not the 0.1% of the types with kernels of their own.
 */
class LowBitGgufPerplexityTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({"brown-llama-q2_K, 133.4103"}) // Q2_K, Q3_K and Q4_K tensors; the other presets run the same kernels
    void matchesLlamaCppWithinActivationQuantization(String file, double llamaPpl) {
        try (GgufModelSource src = GgufModelSource.open(Fixtures.file("brown-llama/imatrix/gguf/" + file + ".gguf"))) {
            Tokenizer tok = src.tokenizer();
            int[] tokens = tok.encode(PerplexityFixture.read(Fixtures.file("corpora/brown/test.txt")), true, false);
            RunnerOptions options = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F16).maxBatchTokens(1024).build();
            try (ModelRunner runner = CpuLlamaRunner.load(src, options)) {
                Perplexity.Result r = Perplexity.evaluate(runner, tokens, WindowProtocol.llamaCpp(256, tok.bosId()), null);
                double rel = r.perplexity() / llamaPpl - 1;
                System.out.printf("%s: PPL %.4f vs llama.cpp %.4f (%+.2e relative)%n", file, r.perplexity(), llamaPpl, rel);
                assertEquals(336, r.windows());
                assertTrue(Math.abs(rel) < 2e-3, file + ": PPL " + r.perplexity() + " vs llama.cpp " + llamaPpl);
            }
        }
    }
}
