package io.modelopt.core.eval;

import java.io.IOException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * brown-llama on test.txt, n_ctx 256 (336 windows, 86k tokens each): every row of
 * brown-llama/perplexity.md within 0.1%.
 *
 * <p>Tagged slow (excluded by default; run with {@code -Dgroups=slow} or {@code -DexcludedGroups=gpu})
 * while MatMul has only its scalar placeholder kernels: each row is 3·10^11 multiply-adds, about 4
 * minutes scalar on this machine. Drop the tag once the Vector API kernels are in.
 */
@Tag("slow")
class BrownPerplexityTest {
    static Stream<PerplexityFixture.Row> rows() throws IOException { return PerplexityFixture.rows("brown-llama", 6); }

    @ParameterizedTest(name = "{0}") @MethodSource("rows")
    void matchesLlamaPerplexity(PerplexityFixture.Row row) { PerplexityFixture.matchesLlamaPerplexity(row); }
}
