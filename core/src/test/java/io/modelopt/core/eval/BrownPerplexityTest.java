package io.modelopt.core.eval;

import java.io.IOException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * brown-llama on test.txt, n_ctx 256 (336 windows of 86k tokens per row): every row of
 * brown-llama/perplexity.md within 0.1%.
 *
 * <p>One row is ~3·10^11 multiply-adds, about 20-25 s on two busy cores, so the default run checks
 * the f32 model with llama.cpp's default F16 cache, and the other five rows are tagged slow
 * (excluded by default): run them with {@code -Dtest=BrownPerplexityTest} and the {@code slow}
 * group enabled.
 */
class BrownPerplexityTest {
    static Stream<PerplexityFixture.Row> rows() throws IOException { return PerplexityFixture.rows("brown-llama", 6); }

    static Stream<PerplexityFixture.Row> defaultRow() throws IOException {
        return rows().filter(r -> r.file().endsWith("f32") && r.kv() == io.modelopt.core.kv.KvDtype.F16);
    }

    static Stream<PerplexityFixture.Row> otherRows() throws IOException {
        return rows().filter(r -> !(r.file().endsWith("f32") && r.kv() == io.modelopt.core.kv.KvDtype.F16));
    }

    @ParameterizedTest(name = "{0}") @MethodSource("defaultRow")
    void f32WithF16CacheMatchesLlamaPerplexity(PerplexityFixture.Row row) { PerplexityFixture.matchesLlamaPerplexity(row); }

    @Tag("slow")
    @ParameterizedTest(name = "{0}") @MethodSource("otherRows")
    void otherTypesMatchLlamaPerplexity(PerplexityFixture.Row row) { PerplexityFixture.matchesLlamaPerplexity(row); }
}
