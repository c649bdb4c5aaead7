package io.modelopt.kvcache;

import io.modelopt.core.kv.KvDtype;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Randomized allocate/compute/append/fork/truncate/free runs against a simple model: the expected
 * tokens of each sequence, and a simulated KV storage whose "entry" at a slot is a hash of the
 * sequence's tokens up to that position (what real keys depend on). After every operation: every
 * computed position of every sequence reads back its expected entry through the block table
 * (prefix hits, copy-on-write and eviction included), each block's reference count equals the
 * number of tables holding it, free blocks are exactly the unreferenced ones, and at the end the
 * pool is empty again.
 */
class BlockManagerModelTest {

    private static final class Expected {
        final List<Integer> tokens = new ArrayList<>();
        int computed;
    }

    @ParameterizedTest
    @ValueSource(ints = {8, 16, 32})
    void randomOperationsKeepTheModelsState(int blockSize) {
        for (long seed = 1; seed <= 4; seed++) run(seed * 7919 + blockSize, blockSize, 5000);
    }

    private static void run(long seed, int blockSize, int ops) {
        Random rnd = new Random(seed);
        int numBlocks = 24 + rnd.nextInt(40);
        BlockManager m = BlockManager.builder().numBlocks(numBlocks).blockSize(blockSize).kvDtype(KvDtype.F16).build();
        long[] storage = new long[numBlocks * blockSize];
        Map<Integer, Expected> model = new HashMap<>();
        // a few shared prompt prefixes so prompts hit the prefix cache
        int[][] prefixes = new int[4][];
        for (int i = 0; i < prefixes.length; i++) {
            prefixes[i] = new int[blockSize * (1 + rnd.nextInt(4)) + rnd.nextInt(blockSize)];
            for (int j = 0; j < prefixes[i].length; j++) prefixes[i][j] = rnd.nextInt(50);
        }
        int nextId = 0, outOfBlocks = 0, hits = 0, cows = 0;
        for (int op = 0; op < ops; op++) {
            List<Integer> live = new ArrayList<>(model.keySet());
            int kind = rnd.nextInt(10);
            String what;
            if (kind < 3 || live.isEmpty()) {
                int[] prompt = prompt(rnd, prefixes);
                int seq = nextId++;
                int freeBefore = m.numFreeBlocks();
                boolean can = m.canAllocate(prompt);
                int cached = m.allocate(seq, prompt);
                assertEquals(can, cached != BlockManager.OUT_OF_BLOCKS, "canAllocate agrees with allocate");
                what = "allocate " + seq + " (" + prompt.length + " tokens) -> " + cached;
                if (cached == BlockManager.OUT_OF_BLOCKS) {
                    outOfBlocks++;
                    assertEquals(freeBefore, m.numFreeBlocks(), "a failed allocation changes nothing");
                    assertFalse(m.contains(seq));
                    assertTrue(m.blocksFor(prompt.length) > 0);
                } else {
                    assertEquals(0, cached % blockSize);
                    assertTrue(cached < prompt.length, "the last prompt token is always computed");
                    if (cached > 0) hits++;
                    Expected e = new Expected();
                    for (int t : prompt) e.tokens.add(t);
                    e.computed = cached;
                    model.put(seq, e);
                    assertEquals(cached, m.computedLength(seq));
                }
            } else {
                int seq = live.get(rnd.nextInt(live.size()));
                Expected e = model.get(seq);
                if (kind < 5) { // compute a chunk of the pending tokens (prefill chunk or decode)
                    applyCopies(m, storage, blockSize);
                    int pending = e.tokens.size() - e.computed;
                    int n = pending == 0 ? 0 : 1 + rnd.nextInt(pending);
                    for (int p = e.computed; p < e.computed + n; p++) storage[(int) m.slot(seq, p)] = entry(e.tokens, p);
                    e.computed += n;
                    m.markComputed(seq, e.computed);
                    what = "compute " + seq + " +" + n;
                } else if (kind < 7) { // append (only once computed, as an engine does)
                    applyCopies(m, storage, blockSize);
                    if (e.computed < e.tokens.size()) continue;
                    int[] toks = new int[1 + (rnd.nextInt(4) == 0 ? rnd.nextInt(2 * blockSize) : 0)];
                    for (int i = 0; i < toks.length; i++) toks[i] = rnd.nextInt(50);
                    int freeBefore = m.numFreeBlocks();
                    boolean can = m.canAppend(seq, toks.length);
                    boolean ok = m.appendSlots(seq, toks);
                    assertEquals(can, ok);
                    what = "append " + seq + " +" + toks.length + " -> " + ok;
                    if (!ok) {
                        outOfBlocks++;
                        assertEquals(freeBefore, m.numFreeBlocks());
                    } else {
                        for (int t : toks) e.tokens.add(t);
                    }
                } else if (kind == 7) { // fork
                    int child = nextId++;
                    m.fork(seq, child);
                    Expected c = new Expected();
                    c.tokens.addAll(e.tokens);
                    c.computed = e.computed;
                    model.put(child, c);
                    what = "fork " + seq + " -> " + child;
                } else if (kind == 8 && rnd.nextBoolean()) {
                    int len = rnd.nextInt(e.tokens.size() + 1);
                    m.truncate(seq, len);
                    while (e.tokens.size() > len) e.tokens.removeLast();
                    e.computed = Math.min(e.computed, len);
                    what = "truncate " + seq + " to " + len;
                    if (len == 0) {
                        m.free(seq);
                        model.remove(seq);
                    }
                } else {
                    m.free(seq);
                    model.remove(seq);
                    what = "free " + seq;
                }
            }
            if (!m.pendingCopies().isEmpty()) cows++;
            check(m, model, storage, blockSize, seed, op, what);
        }
        for (int seq : new ArrayList<>(model.keySet())) m.free(seq);
        m.drainCopies();
        assertEquals(0, m.numUsedBlocks(), "pool returns to empty");
        assertEquals(numBlocks, m.numFreeBlocks());
        for (int b = 0; b < numBlocks; b++) assertEquals(0, m.refCount(b));
        m.resetPrefixCache();
        assertEquals(0, m.stats().cachedBlocks());
        assertEquals(numBlocks, m.numFreeBlocks());
        assertTrue(hits > 0, "the run exercised prefix hits");
        assertTrue(outOfBlocks > 0, "the run exercised running out of blocks");
        assertTrue(cows > 0, "the run exercised copy-on-write");
    }

    private static void applyCopies(BlockManager m, long[] storage, int blockSize) {
        for (BlockCopy c : m.drainCopies()) System.arraycopy(storage, c.source() * blockSize, storage, c.destination() * blockSize, blockSize);
    }

    private static int[] prompt(Random rnd, int[][] prefixes) {
        int[] base = rnd.nextInt(4) == 0 ? new int[0] : prefixes[rnd.nextInt(prefixes.length)];
        int cut = base.length == 0 ? 0 : rnd.nextInt(base.length + 1);
        int extra = 1 + rnd.nextInt(20);
        int[] p = new int[cut + extra];
        System.arraycopy(base, 0, p, 0, cut);
        for (int i = cut; i < p.length; i++) p[i] = rnd.nextInt(50);
        return p;
    }

    /** The simulated key of position {@code p}: depends on every token up to p, as a real key does. */
    private static long entry(List<Integer> tokens, int p) {
        long h = 1469598103934665603L;
        for (int i = 0; i <= p; i++) h = (h ^ tokens.get(i)) * 1099511628211L;
        return h;
    }

    private static void check(BlockManager m, Map<Integer, Expected> model, long[] storage, int blockSize, long seed, int op, String what) {
        String ctx = "seed " + seed + " op " + op + " (" + what + ")";
        int[] refs = new int[m.numBlocks()];
        assertEquals(model.size(), m.sequenceIds().length, ctx);
        for (var en : model.entrySet()) {
            int seq = en.getKey();
            Expected e = en.getValue();
            assertEquals(e.tokens.size(), m.length(seq), ctx);
            assertEquals(e.computed, m.computedLength(seq), ctx);
            int[] table = m.blockTable(seq);
            assertEquals(m.blocksFor(e.tokens.size()), table.length, ctx + ": table length of " + seq);
            for (int b : table) refs[b]++;
            int[] toks = m.tokens(seq);
            for (int i = 0; i < toks.length; i++) assertEquals(e.tokens.get(i), toks[i], ctx);
            // a pending copy-on-write has not reached the storage yet: the destination is still stale
            if (!m.pendingCopies().isEmpty()) continue;
            for (int p = 0; p < e.computed; p++) {
                assertEquals(entry(e.tokens, p), storage[(int) m.slot(seq, p)], ctx + ": sequence " + seq + " position " + p);
            }
        }
        int free = 0;
        for (int b = 0; b < refs.length; b++) {
            assertEquals(refs[b], m.refCount(b), ctx + ": reference count of block " + b);
            if (refs[b] == 0) free++;
        }
        assertEquals(free, m.numFreeBlocks(), ctx + ": free blocks are the unreferenced ones");
        assertEquals(m.numBlocks(), m.numFreeBlocks() + m.numUsedBlocks(), ctx);
    }
}
