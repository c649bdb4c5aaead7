package io.modelopt.core.eval;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.json.Json;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Evaluation} on the fixtures: brown-llama f32 against q8_0 on a few windows of context
 * 128 (seconds), stories260K against llama-perplexity's numbers on the whole text.
 */
class EvaluationTest {
    static final int CTX = 128, WINDOWS = 4, NEW = 16;

    static Evaluation.Options options() {
        return Evaluation.Options.builder().contextLength(CTX).maxWindows(WINDOWS).newTokens(NEW).threads(2).build();
    }

    static String brownText() { return PerplexityFixture.read(Fixtures.file("corpora/brown/test.txt")); }

    /** The start of test.txt: enough for the windows the tests use, quicker to tokenize (the HF tokenizer most of all). */
    static String brownStart() { return brownText().substring(0, 20_000); }

    /** Perplexity of one model alone, by the existing code, with the runner limits EvaluationModels uses. */
    static Perplexity.Result alone(Path model, String text, WindowProtocol protocol) {
        try (ModelOptimizer m = ModelOptimizer.load(model);
             ModelRunner r = io.modelopt.core.engine.Backend.named("cpu").load(m.source(),
                     RunnerOptions.builder().threads(2).kvDtype(KvDtype.F16).contextLength(CTX).build())) {
            return Perplexity.evaluate(r, m.tokenizer().encode(text, true, false), protocol, null);
        }
    }

    @Test
    void q8AgainstF32MatchesThePerplexityOfEachModelAlone() throws Exception {
        Path f32 = Fixtures.brownGguf("f32"), q8 = Fixtures.brownGguf("q8_0");
        String text = brownText();
        List<String> stages = new ArrayList<>();
        Evaluation.Result r = Evaluation.run(f32, q8, text, options(), (stage, done, total) -> {
            if (stages.isEmpty() || !stages.getLast().equals(stage)) stages.add(stage);
        });
        assertEquals(List.of("perplexity+kl (llama.cpp)", "perplexity (windows)", "greedy"), stages);
        assertEquals(86_137, r.tokens());
        assertEquals(CTX, r.contextLength());

        WindowProtocol llama = WindowProtocol.llamaCpp(CTX, 1).withMaxWindows(WINDOWS);
        WindowProtocol windows = WindowProtocol.nonOverlapping(CTX).withMaxWindows(WINDOWS);
        // the paired pass feeds the same batches as a model alone and adds the same NLLs in the same order
        assertEquals(alone(f32, text, llama), r.base().llamaCpp());
        assertEquals(alone(q8, text, llama), r.quant().llamaCpp());
        assertEquals(alone(f32, text, windows), r.base().windows());
        assertEquals(alone(q8, text, windows), r.quant().windows());
        assertEquals(WINDOWS, r.base().llamaCpp().windows());
        assertEquals(WINDOWS * (CTX / 2 - 1), r.base().llamaCpp().tokensScored());
        assertEquals(WINDOWS * (CTX - 1), r.base().windows().tokensScored());
        assertEquals(100 * (r.quant().llamaCpp().perplexity() / r.base().llamaCpp().perplexity() - 1), r.llamaCppChangePercent(), 1e-12);

        KlDivergence.Result kl = r.kl();
        assertEquals(r.base().llamaCpp().tokensScored(), kl.positions());
        assertTrue(kl.meanKl() > 0 && kl.meanKl() < 0.01, kl.toString());   // q8_0: tiny but not zero
        assertTrue(kl.maxKl() >= kl.meanKl(), kl.toString());
        assertTrue(kl.top1Agreement() > 0.9 && kl.top1Agreement() <= 1, kl.toString());

        assertEquals(3, r.greedy().size());
        for (GreedyAgreement g : r.greedy()) {
            assertEquals(1 + 12, g.prompt().length, g.promptText());
            assertEquals(1, g.prompt()[0]);
            assertEquals(NEW, g.base().length);
            assertTrue(g.agreed() >= 0 && g.agreed() <= NEW);
            int first = 0;
            while (first < NEW && g.base()[first] == g.test()[first]) first++;
            assertEquals(first, g.agreed());
        }
        // the first non-empty line of test.txt, its first 12 tokens
        String firstLine = text.lines().filter(l -> !l.isBlank()).findFirst().orElseThrow();
        assertTrue(firstLine.startsWith(r.greedy().getFirst().promptText()), r.greedy().getFirst().promptText());

        // f32: 32 bits everywhere; q8_0: 34 bytes per 32 weights in every block linear
        assertEquals(32.0, r.base().weights().bitsPerWeight(), 1e-12);
        assertEquals(32.0, r.base().weights().blockLinearBitsPerWeight(), 1e-12);
        assertEquals(8.5, r.quant().weights().blockLinearBitsPerWeight(), 1e-12);
        assertEquals(5_245_184, r.base().weights().parameters());
        assertEquals(4L * (256 * 256 * 2 + 128 * 256 * 2 + 768 * 256 * 3), r.base().weights().blockLinearParameters());
        assertEquals(java.nio.file.Files.size(f32), r.base().weights().fileBytes());
        assertTrue(r.quant().memory().totalBytes() > 0 && r.quant().memory().weightBytes() < r.base().memory().weightBytes());
    }

    @Test
    void aModelAgainstItselfAgreesExactly() {
        Path f32 = Fixtures.brownGguf("f32");
        Evaluation.Result r = Evaluation.run(f32, f32, brownStart(), options(), null);
        assertEquals(0.0, r.kl().meanKl());
        assertEquals(0.0, r.kl().maxKl());
        assertEquals(1.0, r.kl().top1Agreement());
        assertEquals(r.base().llamaCpp(), r.quant().llamaCpp());
        assertEquals(r.base().windows(), r.quant().windows());
        assertEquals(0.0, r.llamaCppChangePercent());
        for (GreedyAgreement g : r.greedy()) {
            assertEquals(NEW, g.agreed());
            assertArrayEquals(g.base(), g.test());
        }
        assertEquals(3 * NEW, r.greedyAgreed());
    }

    @Test
    void jsonHoldsTheTablesNumbers() {
        Evaluation.Result r = Evaluation.run(Fixtures.brownGguf("f32"), Fixtures.brownGguf("q8_0"), brownStart(),
                Evaluation.Options.builder().contextLength(CTX).maxWindows(2).newTokens(4).prompts(2).threads(2).build(), null);
        Map<String, Object> j = Json.parseObject(r.toJsonString());
        Map<?, ?> base = (Map<?, ?>) j.get("base"), quant = (Map<?, ?>) j.get("quant");
        assertEquals(r.base().llamaCpp().perplexity(), num(((Map<?, ?>) base.get("perplexity_llama_cpp")).get("perplexity")));
        assertEquals(r.quant().windows().perplexity(), num(((Map<?, ?>) quant.get("perplexity_windows")).get("perplexity")));
        assertEquals(r.llamaCppChangePercent(), num(j.get("perplexity_change_percent_llama_cpp")));
        Map<?, ?> kl = (Map<?, ?>) j.get("kl_divergence");
        assertEquals(r.kl().meanKl(), num(kl.get("mean")));
        assertEquals(r.kl().maxKl(), num(kl.get("max")));
        assertEquals(r.kl().top1Agreement(), num(kl.get("top1_agreement")));
        assertEquals(r.kl().positions(), ((Number) kl.get("positions")).longValue());
        assertEquals(8.5, num(quant.get("block_linear_bits_per_weight")), 1e-12);
        assertEquals(r.quant().weights().fileBytes(), ((Number) quant.get("file_bytes")).longValue());
        List<?> prompts = (List<?>) ((Map<?, ?>) j.get("greedy")).get("prompts");
        assertEquals(2, prompts.size());
        assertEquals((long) r.greedy().get(1).agreed(), ((Number) ((Map<?, ?>) prompts.get(1)).get("agreed")).longValue());

        String table = r.table().render();
        List<String> lines = table.lines().toList();
        assertEquals(2 + 5 + 2 + 5, lines.size(), table);
        int width = lines.getFirst().length();
        for (String l : lines) assertEquals(width, l.length(), "aligned columns:\n" + table);
        assertTrue(table.contains(EvaluationTable.ppl(r.base().llamaCpp())), table);
        assertTrue(table.contains(EvaluationTable.percent(r.llamaCppChangePercent())), table);
    }

    @Test
    void anHfDirectoryEvaluatesAgainstItsGguf() {
        // the HF tokenizer.json and the GGUF vocabulary cut the text alike (fixtures README §4), so this runs
        Evaluation.Result r = Evaluation.run(Fixtures.brownHf(), Fixtures.brownGguf("q8_0"), brownStart(),
                Evaluation.Options.builder().contextLength(CTX).maxWindows(1).newTokens(4).prompts(1).threads(2).build(), null);
        assertEquals("huggingface", r.base().format());
        assertEquals(32.0, r.base().weights().bitsPerWeight(), 1e-12);
        assertTrue(r.kl().meanKl() < 0.01, r.kl().toString());
    }

    @Test
    void storiesPerplexitiesMatchLlamaPerplexity() {
        // llama-perplexity -f fiction-test.txt -c 128 (stories260K/perplexity.md): f32 24.6898, q8_0 24.6779; 293 windows
        Evaluation.Result r = Evaluation.run(Fixtures.storiesGguf("f32"), Fixtures.storiesGguf("q8_0"),
                PerplexityFixture.read(Fixtures.file("corpora/brown/fiction-test.txt")),
                Evaluation.Options.builder().contextLength(128).newTokens(8).threads(2).build(), null);
        assertEquals(293, r.base().llamaCpp().windows());
        assertEquals(18_459, r.base().llamaCpp().tokensScored());
        assertEquals(24.6898, r.base().llamaCpp().perplexity(), 24.6898 * 1e-3);
        assertEquals(24.6779, r.quant().llamaCpp().perplexity(), 24.6779 * 1e-3);
        assertEquals(0.50541, r.base().llamaCpp().error(), 0.01 * 0.50541);
    }

    @Test
    void badInputNamesTheProblem() {
        String text = brownStart();
        var vocab = assertThrows(IllegalArgumentException.class,
                () -> Evaluation.run(Fixtures.brownGguf("f32"), Fixtures.storiesGguf("f32"), text, options(), null));
        assertTrue(vocab.getMessage().contains("different vocabularies (4096 vs 512 tokens)"), vocab.getMessage());

        var shortText = assertThrows(IllegalArgumentException.class,
                () -> Evaluation.run(Fixtures.brownGguf("f32"), Fixtures.brownGguf("q8_0"), "Only a few words.", options(), null));
        assertTrue(shortText.getMessage().contains("fewer than one window of context 128"), shortText.getMessage());

        var ctx = assertThrows(IllegalArgumentException.class, () -> Evaluation.run(Fixtures.brownGguf("f32"), Fixtures.brownGguf("q8_0"), text,
                Evaluation.Options.builder().contextLength(512).threads(2).build(), null));
        assertTrue(ctx.getMessage().contains("context 512 exceeds the trained context length 256"), ctx.getMessage());

        assertThrows(IllegalArgumentException.class, () -> Evaluation.Options.builder().newTokens(-1).build());
    }

    @Test
    void promptsAreTheFirstTokensOfTheFirstNonEmptyLines() {
        try (ModelOptimizer m = ModelOptimizer.load(Fixtures.brownGguf("f32"))) {
            Tokenizer tok = m.tokenizer();
            List<GreedyAgreement.Prompt> p = GreedyAgreement.prompts("\n  \nThe dog ran far away from the big old house on the hill today.\n\nShort.\n",
                    tok, 3, 12);
            assertEquals(2, p.size());
            int[] line = tok.encode("The dog ran far away from the big old house on the hill today.", true, false);
            assertArrayEquals(java.util.Arrays.copyOf(line, 13), p.get(0).ids());
            assertArrayEquals(tok.encode("Short.", true, false), p.get(1).ids());
        }
    }

    private static double num(Object o) { return ((Number) o).doubleValue(); }
}
