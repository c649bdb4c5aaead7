package io.modelopt.core.backend.cpu;

import io.modelopt.core.model.llama.TinyLlama;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.Architecture;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.RopeConvention;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * KV storage with the mapping in the batch: a storage whose physical blocks are handed out in a
 * random order gives the same logits, bit for bit, as the contiguous cache, over a prefill of two
 * sequences, decode steps of both, and a mixed step (one decode token, a chunk of the other).
 */
class BlockTableKvTest {
    private static final int BLOCK = 4, CONTEXT = 32, BLOCKS_PER_SEQUENCE = CONTEXT / BLOCK;
    private static final int[][] PROMPTS = {{1, 17, 5, 33, 2, 60, 9}, {41, 12, 7, 3, 11}};

    static ModelConfig config() {
        return ModelConfig.builder().architecture(Architecture.LLAMA).hiddenSize(48).numLayers(2).numHeads(6).numKvHeads(2)
                .intermediateSize(72).vocabSize(64).contextLength(CONTEXT).rmsNormEps(1e-5f).ropeTheta(10000f)
                .ropeConvention(RopeConvention.ADJACENT_PAIRS).build();
    }

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KernelMode mode : KernelMode.values()) for (KvDtype kv : KvDtype.values()) for (long seed : new long[] {1, 2, 3}) b.add(Arguments.of(mode, kv, seed));
        return b.build();
    }

    private static ModelRunner load(TinyLlama model, KernelMode mode, KvDtype kv) {
        return Backend.named("cpu").load(model, RunnerOptions.builder().threads(2).kernelMode(mode).kvDtype(kv).maxBatchTokens(16).build());
    }

    /** The steps of the scenario, without block tables: prefill, four decode steps, a mixed step, two more decode steps. */
    private static List<Batch.Builder> steps() {
        List<Batch.Builder> steps = new ArrayList<>();
        Batch.Builder prefill = Batch.builder();
        for (int s = 0; s < 2; s++) prefill.addSequence(s, 0, PROMPTS[s], 0, PROMPTS[s].length, true);
        steps.add(prefill);
        int[] next = {PROMPTS[0].length, PROMPTS[1].length};
        for (int i = 0; i < 4; i++) steps.add(decode(next, 20 + i, 40 - i));
        Batch.Builder mixed = Batch.builder();
        mixed.add(8, next[0]++, 0, true);
        mixed.addSequence(1, next[1], new int[] {13, 14, 15}, 0, 3, true);
        next[1] += 3;
        steps.add(mixed);
        for (int i = 0; i < 2; i++) steps.add(decode(next, 30 + i, 50 + i));
        return steps;
    }

    private static Batch.Builder decode(int[] next, int token0, int token1) {
        Batch.Builder b = Batch.builder();
        b.add(token1, next[1]++, 1, true); // the sequences in the other order than the prefill's
        b.add(token0, next[0]++, 0, true);
        return b;
    }

    private static float[][] rows(Logits l) {
        float[][] r = new float[l.rows()][];
        for (int i = 0; i < r.length; i++) r[i] = l.row(i);
        return r;
    }

    @ParameterizedTest(name = "{0} KV {1} seed {2}") @MethodSource("cases")
    void shuffledBlocksGiveTheContiguousCachesLogits(KernelMode mode, KvDtype dtype, long seed) {
        assumeTrue(mode == KernelMode.SCALAR || KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
        int numBlocks = 2 * BLOCKS_PER_SEQUENCE + 3; // a few blocks nobody uses
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < numBlocks; i++) ids.add(i);
        Collections.shuffle(ids, new Random(seed));
        int[][] tables = new int[2][BLOCKS_PER_SEQUENCE];
        for (int s = 0; s < 2; s++) for (int i = 0; i < BLOCKS_PER_SEQUENCE; i++) tables[s][i] = ids.get(s * BLOCKS_PER_SEQUENCE + i);

        try (TinyLlama model = new TinyLlama(config(), 9 + seed); ModelRunner runner = load(model, mode, dtype);
             KvCache contiguous = runner.newKvCache(2, CONTEXT); KvStorage paged = runner.newKvStorage(numBlocks, BLOCK)) {
            assertEquals(dtype, paged.layout().dtype());
            int step = 0;
            for (Batch.Builder b : steps()) {
                Batch plain = b.build();
                float[][] expected = rows(runner.forward(plain, contiguous));
                // a block manager hands the step only the blocks the sequences have reached so far
                Batch.Builder tabled = b.blockSize(BLOCK);
                for (int j = 0; j < plain.sequenceCount(); j++) {
                    int seq = plain.sequence(j);
                    tabled.blockTable(seq, java.util.Arrays.copyOf(tables[seq], plain.lastPosition(j) / BLOCK + 1));
                }
                Batch batch = tabled.build();
                assertTrue(batch.hasBlockTables());
                assertArrayEquals(expected, rows(runner.forward(batch, paged)), "step " + step++);
            }
        }
    }

    @Test
    void slotMappingFollowsTheBlockTables() {
        Batch b = Batch.builder().add(5, 6, 0, true).add(7, 1, 3, false).blockSize(4).blockTable(0, new int[] {9, 2}).blockTable(3, new int[] {5}).build();
        assertEquals(2L * 4 + 2, b.slot(0)); // position 6: logical block 1 → physical 2, token 2
        assertEquals(5L * 4 + 1, b.slot(1));
        assertEquals(9L * 4 + 3, b.slot(0, 3));
        assertEquals(2, b.blockTableLength(0));
        var e = assertThrows(IllegalArgumentException.class, () -> Batch.builder().add(1, 4, 0, true).blockSize(4).blockTable(0, new int[] {1}).build());
        assertTrue(e.getMessage().contains("does not reach position 4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Batch.builder().add(1, 0, 0, true).add(1, 0, 1, true).blockSize(4).blockTable(0, new int[] {1}).build());
        assertTrue(e.getMessage().contains("sequence 1 has no block table"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> Batch.ofSequence(0, 0, new int[] {1}, true).slot(0));
    }

    @Test
    void storageRunsNeedBlockTablesInsideTheStorage() {
        try (TinyLlama model = new TinyLlama(config(), 1); ModelRunner runner = load(model, KernelMode.SCALAR, KvDtype.F32);
             KvStorage storage = runner.newKvStorage(2, BLOCK); KvCache cache = runner.newKvCache()) {
            var e = assertThrows(IllegalArgumentException.class, () -> runner.forward(Batch.ofSequence(0, 0, new int[] {1, 2}, true), storage));
            assertTrue(e.getMessage().contains("block tables"), e.getMessage());
            Batch outside = Batch.builder().add(1, 0, 0, true).blockSize(BLOCK).blockTable(0, new int[] {2}).build();
            e = assertThrows(IllegalArgumentException.class, () -> runner.forward(outside, storage));
            assertTrue(e.getMessage().contains("outside the KV storage's 2 blocks"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> runner.forward(outside, cache));
            assertTrue(e.getMessage().contains("bare KV storage"), e.getMessage());
            assertEquals(2L * 2 * 2 * BLOCK * 2 * 8 * 4, storage.byteSize()); // K+V x layers x blocks x slots x heads x headDim x F32
        }
    }
}
