package io.modelopt.core.eval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.testing.Fixtures;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * llama-perplexity's numbers for the GGUF and KV types listed in a fixture's perplexity.md (rows
 * read from that file), reproduced with {@link WindowProtocol#llamaCpp}: the whole text tokenized
 * as one string with BOS, windows of n_ctx, second halves scored. Used by
 * {@link StoriesPerplexityTest} and {@link BrownPerplexityTest}.
 */
final class PerplexityFixture {
    private PerplexityFixture() {}

    /** One row of a perplexity.md table. */
    record Row(String model, String file, KvDtype kv, double ppl, double error) {
        @Override public String toString() { return file + " KV " + kv; }
    }

    private static final Pattern ROW = Pattern.compile("^\\| gguf/(\\S+)\\.gguf \\| (f16|f32)[^|]*\\| \\**([0-9.]+) ± ([0-9.]+)\\** \\|$");
    private static final Map<String, int[]> TOKENS = new ConcurrentHashMap<>();

    static Stream<Row> rows(String model, int expectedRows) throws IOException {
        List<Row> rows = new ArrayList<>();
        for (String line : Files.readAllLines(Fixtures.file(model + "/perplexity.md"))) {
            Matcher m = ROW.matcher(line.trim());
            if (m.matches()) {
                rows.add(new Row(model, m.group(1), m.group(2).equals("f16") ? KvDtype.F16 : KvDtype.F32,
                        Double.parseDouble(m.group(3)), Double.parseDouble(m.group(4))));
            }
        }
        assertEquals(expectedRows, rows.size(), "rows found in " + model + "/perplexity.md");
        return rows.stream();
    }

    /** Text and n_ctx of each model's llama-perplexity run (perplexity.md). */
    static String text(String model) { return model.equals("stories260K") ? "corpora/brown/fiction-test.txt" : "corpora/brown/test.txt"; }

    static int nCtx(String model) { return model.equals("stories260K") ? 128 : 256; }

    static void matchesLlamaPerplexity(Row row) {
        Path gguf = Fixtures.file(row.model() + "/gguf/" + row.file() + ".gguf");
        try (GgufModelSource src = GgufModelSource.open(gguf)) {
            Tokenizer tok = src.tokenizer();
            int[] tokens = TOKENS.computeIfAbsent(row.model(), m -> tok.encode(read(Fixtures.file(text(m))), true, false));
            assertEquals(row.model().equals("stories260K") ? 37_528 : 86_137, tokens.length, "token count from perplexity.md");
            RunnerOptions options = RunnerOptions.builder().threads(2).kvDtype(row.kv()).maxBatchTokens(4 * nCtx(row.model())).build();
            ModelRunner runner;
            try {
                runner = CpuLlamaRunner.load(src, options);
            } catch (UnsupportedOperationException e) {
                assumeTrue(false, "skipped: " + row.file() + " uses a weight format without a kernel yet: " + e.getMessage());
                return;
            }
            try (runner) {
                Perplexity.Result r;
                try {
                    r = Perplexity.evaluate(runner, tokens, WindowProtocol.llamaCpp(nCtx(row.model()), tok.addsBos() ? tok.bosId() : -1), null);
                } catch (UnsupportedOperationException e) {
                    assumeTrue(false, "skipped: " + row.file() + " uses a weight format without a kernel yet: " + e.getMessage());
                    return;
                }
                double rel = r.perplexity() / row.ppl() - 1;
                System.out.printf("%s KV %s: PPL %.4f ± %.5f vs llama.cpp %.4f ± %.5f (%+.2e relative), %d windows, %d scored%n",
                        row.file(), row.kv(), r.perplexity(), r.error(), row.ppl(), row.error(), rel, r.windows(), r.tokensScored());
                assertEquals(row.model().equals("stories260K") ? 293 : 336, r.windows());
                assertEquals(row.model().equals("stories260K") ? 18_459 : 42_672, r.tokensScored());
                assertTrue(Math.abs(rel) < 1e-3, row + ": PPL " + r.perplexity() + " vs " + row.ppl());
                assertEquals(row.error(), r.error(), 0.01 * row.error());
                assertFalse(Double.isNaN(r.meanNll()));
            }
        }
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
