package io.modelopt.kvcache;

import io.modelopt.core.backend.cpu.CpuBackend;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/**
 * The block manager driving the CPU runner on bare storage (the engine's way), against the
 * contiguous cache on the synthetic micro model: paged attention equals contiguous attention
 * bit for bit over shuffled physical blocks, lengths that are not multiples of the block size,
 * prefill chunks and decode; a prefix-cache hit gives the logits of recomputing the prefix; a fork
 * followed by divergent appends (copy-on-write) gives both sequences the logits of running them separately.
 */
class PagedForwardTest {
    private static final int BLOCK = 8, BLOCKS = 64;
    @TempDir static Path dir;
    private static GgufModelSource model;

    @BeforeAll static void model() {
        Path p = dir.resolve("micro.gguf");
        SyntheticModel.of(SyntheticSpec.MICRO, GgmlType.F32, 5).writeGguf(p, (s, d, t) -> {});
        model = GgufModelSource.open(p);
    }

    @AfterAll static void close() { model.close(); }

    private static ModelRunner runner(KvDtype kv) {
        return new CpuBackend().load(model, RunnerOptions.builder().threads(2).kvDtype(kv).maxBatchTokens(64).maxLogitsRows(64).maxSequences(4).build());
    }

    private static int[] tokens(Random r, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = 1 + r.nextInt(500);
        return t;
    }

    /** The engine side of a test: a manager over storage; each step's copies applied, tables attached, computed lengths recorded. */
    private record Paged(ModelRunner runner, KvStorage storage, BlockManager blocks) {
        float[][] step(int[] seqs, int[][] toks, int[] starts) {
            BlockCopier.copy(storage, blocks.drainCopies());
            Batch.Builder b = Batch.builder().blockSize(blocks.blockSize());
            for (int j = 0; j < seqs.length; j++) {
                for (int i = 0; i < toks[j].length; i++) b.add(toks[j][i], starts[j] + i, seqs[j], true);
                b.blockTable(seqs[j], blocks.blockTable(seqs[j]));
            }
            float[][] rows = rows(runner.forward(b.build(), storage));
            for (int j = 0; j < seqs.length; j++) blocks.markComputed(seqs[j], starts[j] + toks[j].length);
            return rows;
        }
    }

    private static float[][] contiguous(ModelRunner runner, KvCache cache, int[] seqs, int[][] toks, int[] starts) {
        Batch.Builder b = Batch.builder();
        for (int j = 0; j < seqs.length; j++) for (int i = 0; i < toks[j].length; i++) b.add(toks[j][i], starts[j] + i, seqs[j], true);
        return rows(runner.forward(b.build(), cache));
    }

    private static float[][] rows(Logits l) {
        float[][] r = new float[l.rows()][];
        for (int i = 0; i < r.length; i++) r[i] = l.row(i);
        return r;
    }

    /**
     * A manager whose free blocks are scattered over the pool: filler sequences (ids from 100) take
     * every block, then the fillers of a random half of the even blocks are freed, in a random order.
     * The manager hands out the lowest free block first, so a sequence's blocks ascend with gaps
     * (never two adjacent ones) and two sequences' blocks interleave. {@link #freeFillers} frees the rest.
     */
    private static BlockManager shuffledManager(Random r, boolean prefixCaching) {
        BlockManager m = BlockManager.builder().numBlocks(BLOCKS).blockSize(BLOCK).kvDtype(KvDtype.F32).prefixCaching(prefixCaching).build();
        List<Integer> even = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            m.allocate(100 + i, tokens(r, 1)); // a fresh manager: filler i takes block i
            if (i % 2 == 0) even.add(100 + i);
        }
        Collections.shuffle(even, r);
        for (int id : even.subList(0, even.size() / 2)) m.free(id);
        return m;
    }

    private static void freeFillers(BlockManager m) {
        for (int id = 100; id < 100 + BLOCKS; id++) if (m.contains(id)) m.free(id);
    }

    @ParameterizedTest @EnumSource(value = KvDtype.class)
    void pagedEqualsContiguousBitForBit(KvDtype kv) {
        Random r = new Random(kv.ordinal() + 1);
        int[] a = tokens(r, 29), b = tokens(r, 13); // not multiples of the block size
        try (ModelRunner runner = runner(kv); KvCache cache = runner.newKvCache(2, 64); KvStorage storage = runner.newKvStorage(BLOCKS, BLOCK)) {
            BlockManager m = shuffledManager(r, false);
            Paged p = new Paged(runner, storage, m);
            assertEquals(0, m.allocate(0, a));
            assertEquals(0, m.allocate(1, b));
            assertNotEquals(m.blockTable(0)[0] + 1, m.blockTable(0)[1], "the blocks are not adjacent");
            // prefill chunks: a in 11 + 18 tokens, b in one step with a's second chunk
            assertArrays(contiguous(runner, cache, new int[] {0}, new int[][] {java.util.Arrays.copyOfRange(a, 0, 11)}, new int[] {0}),
                    p.step(new int[] {0}, new int[][] {java.util.Arrays.copyOfRange(a, 0, 11)}, new int[] {0}), "chunk 1");
            int[][] mixed = {java.util.Arrays.copyOfRange(a, 11, 29), b};
            assertArrays(contiguous(runner, cache, new int[] {0, 1}, mixed, new int[] {11, 0}), p.step(new int[] {0, 1}, mixed, new int[] {11, 0}), "chunk 2 + prompt b");
            // the remaining fillers go: the blocks the decode appends can then lie below the prompts' blocks
            freeFillers(m);
            // decode both, feeding the same tokens
            int posA = 29, posB = 13;
            for (int s = 0; s < 12; s++) {
                int ta = 1 + r.nextInt(500), tb = 1 + r.nextInt(500);
                assertTrue(m.appendSlot(0, ta));
                assertTrue(m.appendSlot(1, tb));
                int[][] t = {{ta}, {tb}};
                assertArrays(contiguous(runner, cache, new int[] {0, 1}, t, new int[] {posA, posB}), p.step(new int[] {0, 1}, t, new int[] {posA, posB}), "decode " + s);
                posA++;
                posB++;
            }
            assertTrue(descends(m.blockTable(0)) || descends(m.blockTable(1)), "a block table goes backwards in the pool");
        }
    }

    private static boolean descends(int[] table) {
        for (int i = 1; i < table.length; i++) if (table[i] < table[i - 1]) return true;
        return false;
    }

    @Test
    void aPrefixHitGivesTheLogitsOfRecomputingThePrefix() {
        Random r = new Random(7);
        int[] shared = tokens(r, 24), a = concat(shared, tokens(r, 5)), b = concat(shared, tokens(r, 9));
        try (ModelRunner runner = runner(KvDtype.F32); KvStorage storage = runner.newKvStorage(BLOCKS, BLOCK); KvCache cache = runner.newKvCache(2, 64)) {
            BlockManager m = shuffledManager(r, true);
            Paged p = new Paged(runner, storage, m);
            assertEquals(0, m.allocate(0, a));
            p.step(new int[] {0}, new int[][] {a}, new int[] {0});
            int cached = m.allocate(1, b);
            assertEquals(24, cached, "three full blocks of the shared prefix hit");
            assertEquals(3, m.stats().hitBlocks());
            int[] rest = java.util.Arrays.copyOfRange(b, cached, b.length);
            float[][] hit = p.step(new int[] {1}, new int[][] {rest}, new int[] {cached});
            // the same kernel path: b's prefix computed as its own chunk, then the rest as one chunk
            contiguous(runner, cache, new int[] {1}, new int[][] {java.util.Arrays.copyOf(b, cached)}, new int[] {0});
            assertArrays(contiguous(runner, cache, new int[] {1}, new int[][] {rest}, new int[] {cached}), hit, "same chunking");
            // recomputing the whole prompt in one chunk: a GEMM over more rows, equal to 1e-3
            float[][] whole = contiguous(runner, cache, new int[] {0}, new int[][] {b}, new int[] {0});
            for (int i = 0; i < rest.length; i++) {
                float[] x = whole[cached + i], y = hit[i];
                for (int v = 0; v < x.length; v++) assertEquals(x[v], y[v], 1e-3, "row " + i + " logit " + v);
            }
        }
    }

    @Test
    void aForkSharesThePromptAndCopiesOnWrite() {
        Random r = new Random(9);
        int[] prompt = tokens(r, 21); // the last block partially filled: shared, then copied
        try (ModelRunner runner = runner(KvDtype.F32); KvStorage storage = runner.newKvStorage(BLOCKS, BLOCK); KvCache cache = runner.newKvCache(2, 64)) {
            BlockManager m = shuffledManager(r, true);
            Paged p = new Paged(runner, storage, m);
            m.allocate(0, prompt);
            float[][] first = p.step(new int[] {0}, new int[][] {prompt}, new int[] {0});
            int used = m.numUsedBlocks();
            m.fork(0, 1);
            assertEquals(used, m.numUsedBlocks(), "a fork takes no block");
            // separately: each sequence prefilled on its own (same batch shape as the paged prefill)
            assertArrays(contiguous(runner, cache, new int[] {0}, new int[][] {prompt}, new int[] {0}), first, "prefill");
            contiguous(runner, cache, new int[] {1}, new int[][] {prompt}, new int[] {0});
            int pos = prompt.length, copies = 0;
            for (int s = 0; s < 10; s++) {
                int ta = 1 + r.nextInt(500), tb = 1 + r.nextInt(500);
                assertTrue(m.appendSlot(0, ta));
                assertTrue(m.appendSlot(1, tb));
                copies += m.pendingCopies().size();
                int[][] t = {{ta}, {tb}};
                assertArrays(contiguous(runner, cache, new int[] {0, 1}, t, new int[] {pos, pos}), p.step(new int[] {0, 1}, t, new int[] {pos, pos}), "decode " + s);
                pos++;
            }
            assertEquals(1, copies, "one copy-on-write: the shared partial block");
            assertArrayEquals(java.util.Arrays.copyOf(m.blockTable(0), 2), java.util.Arrays.copyOf(m.blockTable(1), 2), "full prompt blocks stay shared");
            m.free(0);
            m.free(1);
            freeFillers(m);
            assertEquals(0, m.numUsedBlocks());
        }
    }

    @Test
    void aPoolOwnsItsStorageAndRefusesUseWhenClosed() {
        try (ModelRunner runner = runner(KvDtype.INT8)) {
            KvBlockPool pool = KvBlockPool.of(runner, 10, 16, true);
            assertEquals(10, pool.storage().layout().numBlocks());
            assertEquals(KvDtype.INT8, pool.blocks().kvDtype());
            pool.close();
            var e = assertThrows(IllegalStateException.class, pool::storage);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertThrows(IllegalStateException.class, pool::blocks);
            var bs = assertThrows(IllegalArgumentException.class, () -> KvBlockPool.of(runner, 10, 12, true));
            assertTrue(bs.getMessage().contains("12") && bs.getMessage().contains("power of two"), bs.getMessage());
        }
    }

    private static int[] concat(int[] x, int[] y) {
        int[] z = java.util.Arrays.copyOf(x, x.length + y.length);
        System.arraycopy(y, 0, z, x.length, y.length);
        return z;
    }

    private static void assertArrays(float[][] expected, float[][] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) assertArrayEquals(expected[i], actual[i], what + " row " + i);
    }
}
