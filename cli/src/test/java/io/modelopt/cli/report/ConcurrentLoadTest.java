package io.modelopt.cli.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelConfig;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The concurrent load's prompts, pool size and percentile, without a model. */
class ConcurrentLoadTest {
    private static final ModelConfig CONFIG = ModelConfig.builder().hiddenSize(64).numLayers(2).numHeads(4).numKvHeads(2).intermediateSize(128)
            .vocabSize(512).contextLength(128).bosTokenId(1).build();

    @Test
    void requestsShareExactlyTheSystemPromptAndTheRoundsDifferInTheirQuestions() {
        int[][] warm = ConcurrentLoad.prompts(CONFIG, 0), measured = ConcurrentLoad.prompts(CONFIG, 1);
        assertEquals(8, measured.length);
        int[] system = Arrays.copyOf(measured[0], ConcurrentLoad.SYSTEM_PROMPT_TOKENS);
        assertEquals(1, system[0], "BOS first");
        for (int i = 0; i < 8; i++) {
            assertEquals(64 + 16, measured[i].length);
            assertArrayEquals(system, Arrays.copyOf(measured[i], 64), "request " + i + " shares the system prompt");
            assertArrayEquals(system, Arrays.copyOf(warm[i], 64), "so does the warm-up round");
            int[] q = Arrays.copyOfRange(measured[i], 64, 80);
            assertFalse(Arrays.equals(q, Arrays.copyOfRange(warm[i], 64, 80)), "warm-up questions differ: only the prefix may hit the cache");
            for (int j = 0; j < i; j++) assertFalse(Arrays.equals(q, Arrays.copyOfRange(measured[j], 64, 80)), i + " vs " + j);
        }
        assertArrayEquals(measured[3], ConcurrentLoad.prompts(CONFIG, 1)[3], "seeded");
    }

    @Test
    void thePoolHoldsEveryRequestsContextAndCountsInt8ScalesInItsBytes() {
        ConcurrentLoad load = new ConcurrentLoad(32);
        assertEquals(64 + 16 + 32, load.contextPerRequest());
        assertEquals(7, load.kvBlocks(false), "ceil(112 / 16)");
        assertEquals(56, load.kvBlocks(true));
        // 2 layers x (K + V) x 56 blocks x 16 slots x (kvDim 32 x 1 byte + 2 heads x 4-byte scale)
        assertEquals(2L * 2 * 56 * 16 * (32 + 2 * 4), load.poolBytes(CONFIG, KvDtype.INT8, true));
        assertEquals(2L * 2 * 7 * 16 * 32 * 2, load.poolBytes(CONFIG, KvDtype.F16, false));
    }

    @Test
    void p95ByNearestRankOfEightIsTheLargest() {
        assertEquals(9.0, ConcurrentLoad.p95(new double[] {3, 1, 9, 2, 5, 4, 8, 7}));
        assertEquals(95.0, ConcurrentLoad.p95(java.util.stream.IntStream.rangeClosed(1, 100).asDoubleStream().toArray()));
    }
}
