package io.modelopt.core.eval;

import java.io.IOException;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** stories260K on fiction-test.txt, n_ctx 128: every row of stories260K/perplexity.md within 0.1%. */
class StoriesPerplexityTest {
    static Stream<PerplexityFixture.Row> rows() throws IOException { return PerplexityFixture.rows("stories260K", 4); }

    @ParameterizedTest(name = "{0}") @MethodSource("rows")
    void matchesLlamaPerplexity(PerplexityFixture.Row row) { PerplexityFixture.matchesLlamaPerplexity(row); }
}
