package io.modelopt.core.model.llama;

import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The two fixture models (stories260K, brown-llama) from both formats against llama.cpp's greedy
 * generations and the float64 reference logits (see the fixtures' README and ORACLE.md): an F32
 * KV cache as the references used, the prompt prefilled in one batch, then single-token decode
 * steps with argmax.
 */
class FixtureModelsTest {
    /** Relative tolerance on the reference's top-5 logits at the last prompt position. */
    private static final double TOP5_REL = 1e-4;
    /** Absolute tolerance on all logits vs the float64 reference (llama.cpp itself is within 7e-6). */
    private static final double ALL_ABS = 1e-4;

    static Stream<Arguments> f32Models() {
        return Stream.of(Arguments.of("stories260K", "gguf"), Arguments.of("stories260K", "hf"),
                Arguments.of("brown-llama", "gguf"), Arguments.of("brown-llama", "hf"));
    }

    static ModelSource open(String model, String format) {
        return switch (format) {
            case "gguf" -> GgufModelSource.open(Fixtures.file(model + "/gguf/" + model + "-f32.gguf"));
            case "hf" -> HfModelSource.open(Fixtures.file(model + "/hf"));
            default -> GgufModelSource.open(Fixtures.file(model + "/gguf/" + format));
        };
    }

    static RunnerOptions f32Options() {
        return RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(64).build();
    }

    /** Prefill + greedy decode; returns the generated ids and leaves the prompt's last logits in {@code lastPromptLogits}. */
    static int[] greedy(ModelRunner runner, KvCache cache, int[] prompt, int steps, float[] lastPromptLogits) {
        cache.clear(0);
        Logits l = runner.forward(Batch.ofSequence(0, 0, prompt, false), cache);
        l.copyRow(0, lastPromptLogits, 0);
        int[] out = new int[steps];
        int n = 0;
        int next = l.argmax(0);
        while (true) {
            out[n++] = next;
            if (n == steps || runner.config().isEos(next)) break;
            l = runner.forward(Batch.decodeStep(new int[] {0}, new int[] {next}, new int[] {prompt.length + n - 1}), cache);
            next = l.argmax(0);
        }
        return Arrays.copyOf(out, n);
    }

    @ParameterizedTest(name = "{0} {1}") @MethodSource("f32Models")
    void greedyGenerationAndLogitsMatchReferences(String model, String format) {
        ReferenceFixture ref = ReferenceFixture.load(model);
        try (ModelSource src = open(model, format); ModelRunner runner = CpuLlamaRunner.load(src, f32Options()); KvCache cache = runner.newKvCache()) {
            float[] logits = new float[runner.config().vocabSize()];
            double worstAll = 0, worstTop5 = 0;
            for (ReferenceFixture.Prompt p : ref.prompts()) {
                int[] gen = greedy(runner, cache, p.ids(), p.llamaCpp().genIds().length, logits);
                assertArrayEquals(p.llamaCpp().genIds(), gen, model + " " + format + " greedy ids for '" + p.text() + "'");
                assertEquals(p.logits().length, logits.length);
                for (int i = 0; i < logits.length; i++) worstAll = Math.max(worstAll, Math.abs(logits[i] - p.logits()[i]));
                ReferenceFixture.Generation top = p.reference();
                for (int k = 0; k < 5; k++) {
                    double rel = Math.abs(logits[top.top5Ids()[k]] - top.top5Logits()[k]) / Math.abs(top.top5Logits()[k]);
                    worstTop5 = Math.max(worstTop5, rel);
                    assertTrue(rel <= TOP5_REL, model + " " + format + " '" + p.text() + "' top-" + (k + 1) + " token " + top.top5Ids()[k]
                            + ": " + logits[top.top5Ids()[k]] + " vs " + top.top5Logits()[k]);
                }
                assertArrayEquals(top.top5Ids(), topK(logits, 5), "top-5 order");
            }
            System.out.printf("%s %s: 3x48 greedy ids equal llama.cpp; max |logit - float64 ref| %.3g; worst top-5 relative %.3g%n",
                    model, format, worstAll, worstTop5);
            assertTrue(worstAll <= ALL_ABS, model + " " + format + ": max |logit diff| " + worstAll);
        }
    }

    @ParameterizedTest(name = "{0}") @MethodSource("modelNames")
    void ggufAndHfGiveTheSameLogits(String model) {
        ReferenceFixture ref = ReferenceFixture.load(model);
        try (ModelSource gguf = open(model, "gguf"); ModelSource hf = open(model, "hf");
             ModelRunner rg = CpuLlamaRunner.load(gguf, f32Options()); ModelRunner rh = CpuLlamaRunner.load(hf, f32Options());
             KvCache cg = rg.newKvCache(); KvCache ch = rh.newKvCache()) {
            double worst = 0;
            for (ReferenceFixture.Prompt p : ref.prompts()) {
                cg.clear(0);
                ch.clear(0);
                Logits a = rg.forward(Batch.ofSequence(0, 0, p.ids(), true), cg);
                float[] all = new float[a.rows() * a.vocabSize()];
                for (int r = 0; r < a.rows(); r++) a.copyRow(r, all, r * a.vocabSize());
                Logits b = rh.forward(Batch.ofSequence(0, 0, p.ids(), true), ch);
                for (int r = 0; r < b.rows(); r++)
                    for (int v = 0; v < b.vocabSize(); v++) worst = Math.max(worst, Math.abs(all[r * b.vocabSize() + v] - b.get(r, v)));
            }
            System.out.printf("%s: GGUF vs HF, all prompt positions: max |logit diff| %.3g%n", model, worst);
            assertTrue(worst < 2e-5, "GGUF and HF logits differ by " + worst);
        }
    }

    static Stream<String> modelNames() { return Stream.of("stories260K", "brown-llama"); }

    static Stream<Arguments> quantizedModels() {
        return Stream.of(Arguments.of("stories260K", "stories260K-q8_0.gguf"), Arguments.of("stories260K", "stories260K-q4_0.gguf"),
                Arguments.of("brown-llama", "brown-llama-q8_0.gguf"), Arguments.of("brown-llama", "brown-llama-q6_K.gguf"),
                Arguments.of("brown-llama", "brown-llama-q4_K_M.gguf"), Arguments.of("brown-llama", "brown-llama-q4_0.gguf"));
    }

    /**
     * Top-5 logits of a quantized model vs llama.cpp's on the same file. Most prompts agree to ~1e-6:
     * the weight formats and llama.cpp's 8-bit activation quantization are reproduced exactly. But
     * quantizing an activation to 8 bits turns a last-ulp float difference upstream (another
     * summation order in a matmul or the attention) into a whole quantization step when the value
     * sits on a rounding boundary, and at the classifier input one step moves a logit by
     * {@code |w|·amax/127} (at most 0.035 in these 18 cases, with vector or scalar kernels). So
     * every top-5 logit must be within {@link #QUANT_TOP5_ABS}, and at least
     * {@link #QUANT_TIGHT_CASES} of the 18 (file, prompt) cases within {@link #QUANT_TOP5_TIGHT} (a
     * systematic error would leave none that close).
     *
     * <p>llama.cpp is no closer to itself across CPUs. The references were taken on an AMD EPYC
     * (AVX-512, no AMX). The same commit built with {@code GGML_NATIVE} on the development VM (an
     * Intel Xeon with AMX), through a small program that reproduces the reference run (F32 KV
     * cache, one thread, the prompt in one batch), gives 13 of the 18 cases within 2e-3: its AMX
     * kernels, chosen at load for Q8_0 and the k-quants, sum in another order, and brown-llama q8_0
     * moves by 5.4e-3 / 7.1e-3 / 4.1e-3, q6_K prompt 3 by 6.1e-3, q4_K_M prompt 3 by 9.0e-3. Built
     * without AMX ({@code -mno-amx-*}) it reproduces all 18 exactly. Bit-for-bit agreement would mean
     * copying the summation order of each of ggml's x86 kernels (for Q8_0: eight lane sums per block
     * and its horizontal-add tree, which in an experiment brought prompts 1 and 2 of brown-llama
     * q8_0 to 4e-7) and giving up the float GEMM for prompts (whose products are rounded one by one);
     * docs/ARCHITECTURE.md, "Numerics", has the details.
     */
    private static final double QUANT_TOP5_ABS = 0.05;
    private static final double QUANT_TOP5_TIGHT = 2e-3;
    /** 10 of 18 with the vector kernels, 12 with the scalar ones; llama.cpp's own AMX build: 13. */
    private static final int QUANT_TIGHT_CASES = 9;

    static final String[][] QUANTIZED = {{"stories260K", "stories260K-q8_0.gguf"}, {"stories260K", "stories260K-q4_0.gguf"},
            {"brown-llama", "brown-llama-q8_0.gguf"}, {"brown-llama", "brown-llama-q6_K.gguf"},
            {"brown-llama", "brown-llama-q4_K_M.gguf"}, {"brown-llama", "brown-llama-q4_0.gguf"}};

    /** Quantized GGUFs vs llama.cpp on the same files: the first 16 greedy tokens equal, top-5 logits as described above. */
    @Test
    void quantizedModelsFollowLlamaCpp() {
        int tight = 0, cases = 0;
        StringBuilder table = new StringBuilder();
        for (String[] mf : QUANTIZED) {
            String model = mf[0], file = mf[1];
            ReferenceFixture ref = ReferenceFixture.load(model);
            try (ModelSource src = open(model, file); ModelRunner runner = CpuLlamaRunner.load(src, f32Options()); KvCache cache = runner.newKvCache()) {
                float[] logits = new float[runner.config().vocabSize()];
                table.append(String.format("%n  %-24s top-5 max |diff| per prompt:", file));
                for (ReferenceFixture.Prompt p : ref.prompts()) {
                    ReferenceFixture.Generation q = p.quantized().get(file);
                    int[] gen = greedy(runner, cache, p.ids(), 16, logits);
                    assertArrayEquals(Arrays.copyOf(q.genIds(), 16), gen, file + " first 16 greedy ids for '" + p.text() + "'");
                    double worst = 0;
                    for (int k = 0; k < 5; k++) {
                        double d = Math.abs(logits[q.top5Ids()[k]] - q.top5Logits()[k]);
                        worst = Math.max(worst, d);
                        assertTrue(d <= QUANT_TOP5_ABS, file + " '" + p.text() + "' top-" + (k + 1) + ": " + logits[q.top5Ids()[k]] + " vs " + q.top5Logits()[k]);
                    }
                    cases++;
                    if (worst <= QUANT_TOP5_TIGHT) tight++;
                    table.append(String.format(" %.2g", worst));
                }
            }
        }
        System.out.printf("quantized GGUFs: 6 files x 3 prompts x 16 greedy ids equal llama.cpp; %d/%d cases within %.0e:%s%n",
                tight, cases, QUANT_TOP5_TIGHT, table);
        assertTrue(tight >= QUANT_TIGHT_CASES, tight + " of " + cases + " cases within " + QUANT_TOP5_TIGHT + ":" + table);
    }

    @Test
    void contextOverflowOnTheStoriesGguf() {
        // stories260K-f32.gguf says llama.context_length = 128 (see the fixtures' README)
        try (ModelSource src = open("stories260K", "gguf"); ModelRunner runner = CpuLlamaRunner.load(src, f32Options()); KvCache cache = runner.newKvCache()) {
            assertEquals(128, runner.contextLength());
            cache.setLength(0, 127);
            runner.forward(Batch.ofSequence(0, 127, new int[] {5}, false), cache);
            var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> runner.forward(Batch.ofSequence(0, 128, new int[] {5}, false), cache));
            assertTrue(e.getMessage().contains("position 128") && e.getMessage().contains("context length 128"), e.getMessage());
        }
    }

    static int[] topK(float[] logits, int k) {
        Integer[] idx = new Integer[logits.length];
        for (int i = 0; i < idx.length; i++) idx[i] = i;
        Arrays.sort(idx, (a, b) -> Float.compare(logits[b], logits[a]));
        int[] out = new int[k];
        for (int i = 0; i < k; i++) out[i] = idx[i];
        return out;
    }
}
