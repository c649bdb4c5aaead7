package io.modelopt.kvcache;

import io.modelopt.core.kv.KvDtype;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class BlockManagerTest {

    private static int[] range(int from, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = from + i;
        return a;
    }

    private static BlockManager manager(int blocks) {
        return BlockManager.builder().numBlocks(blocks).blockSize(8).build();
    }

    @Test
    void allocatesCeilBlocksAndMapsSlotsThroughTheTable() {
        BlockManager m = manager(10);
        assertEquals(0, m.allocate(3, range(0, 17)));
        int[] t = m.blockTable(3);
        assertEquals(3, t.length);
        assertEquals(7, m.numFreeBlocks());
        assertEquals((long) t[2] * 8 + 0, m.slot(3, 16));
        assertEquals((long) t[1] * 8 + 5, m.slot(3, 13));
        assertThrows(IndexOutOfBoundsException.class, () -> m.slot(3, 17));
    }

    @Test
    void computedFullBlocksServeTheNextPromptButNeverItsLastToken() {
        BlockManager m = manager(10);
        int[] prompt = range(100, 20);
        m.allocate(0, prompt);
        assertEquals(0, m.allocate(1, prompt), "nothing is cached before it is computed");
        m.markComputed(0, 20);
        assertEquals(16, m.allocate(2, prompt), "two full blocks hit");
        assertArrayEquals(java.util.Arrays.copyOf(m.blockTable(0), 2), java.util.Arrays.copyOf(m.blockTable(2), 2));
        assertEquals(2, m.refCount(m.blockTable(0)[0]));
        assertEquals(8, m.allocate(3, range(100, 16)), "a 16-token prompt reuses at most 15 tokens: one block");
        m.free(0);
        m.free(1);
        m.free(2);
        m.free(3);
        assertEquals(0, m.numUsedBlocks());
        assertEquals(16, m.allocate(4, prompt), "freed blocks stay cached");
        PrefixCacheStats s = m.stats();
        assertEquals(2 + 2 + 2 + 1 + 2, s.queriedBlocks());
        assertEquals(2 + 1 + 2, s.hitBlocks());
        assertEquals(40, s.hitTokens());
    }

    @Test
    void theHashDependsOnThePrefixNotJustTheBlock() {
        BlockManager m = manager(10);
        int[] a = range(0, 17);
        int[] b = range(0, 17);
        b[0] = 99; // first block differs, second block equal
        m.allocate(0, a);
        m.markComputed(0, 17);
        assertEquals(0, m.allocate(1, b));
    }

    @Test
    void evictsLeastRecentlyFreedCachedBlocksWhenMemoryIsNeeded() {
        BlockManager m = manager(4);
        m.allocate(0, range(0, 17)); // 3 blocks, 2 full
        m.markComputed(0, 17);
        m.free(0);
        assertEquals(4, m.numFreeBlocks());
        assertEquals(2, m.stats().cachedBlocks());
        assertEquals(0, m.allocate(1, range(500, 32))); // needs all 4: evicts both cached blocks
        assertEquals(2, m.stats().evictions());
        assertEquals(0, m.stats().cachedBlocks());
    }

    @Test
    void forkSharesBlocksAndCopiesAPartialBlockOnFirstWrite() {
        BlockManager m = manager(10);
        m.allocate(0, range(0, 12));
        m.markComputed(0, 12);
        m.fork(0, 1);
        assertArrayEquals(m.blockTable(0), m.blockTable(1));
        assertEquals(8, m.numFreeBlocks(), "a fork takes no block");
        assertTrue(m.appendSlot(1, 7));
        List<BlockCopy> copies = m.drainCopies();
        assertEquals(1, copies.size());
        assertEquals(m.blockTable(0)[1], copies.get(0).source());
        assertEquals(m.blockTable(1)[1], copies.get(0).destination());
        assertEquals(m.blockTable(0)[0], m.blockTable(1)[0], "the full block stays shared");
        assertTrue(m.appendSlot(0, 8));
        assertTrue(m.drainCopies().isEmpty(), "the parent owns its block alone now");
        assertEquals(7, m.numFreeBlocks());
    }

    @Test
    void runningOutIsAReturnValueAndChangesNothing() {
        BlockManager m = manager(2);
        assertEquals(BlockManager.OUT_OF_BLOCKS, m.allocate(0, range(0, 17)));
        assertFalse(m.contains(0));
        assertEquals(0, m.allocate(0, range(0, 16)));
        assertFalse(m.appendSlot(0, 1));
        assertEquals(16, m.length(0));
        assertEquals(2, m.blockTable(0).length);
    }

    @Test
    void badInputIsRejectedWithTheNumbers() {
        var e = assertThrows(IllegalArgumentException.class, () -> BlockManager.builder().numBlocks(4).blockSize(24).build());
        assertTrue(e.getMessage().contains("24") && e.getMessage().contains("power of two"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BlockManager.builder().numBlocks(4).blockSize(512).build());
        assertThrows(IllegalArgumentException.class, () -> BlockManager.builder().numBlocks(4).blockSize(4).build());
        assertThrows(IllegalArgumentException.class, () -> BlockManager.builder().numBlocks(0).build());
        BlockManager m = manager(4);
        m.allocate(1, range(0, 3));
        assertThrows(IllegalArgumentException.class, () -> m.allocate(1, range(0, 3)));
        assertThrows(IllegalArgumentException.class, () -> m.free(2));
        assertThrows(IllegalArgumentException.class, () -> m.fork(1, 1));
        assertThrows(IllegalArgumentException.class, () -> m.markComputed(1, 4));
        assertThrows(IllegalArgumentException.class, () -> m.allocate(5, new int[0]));
    }

    @Test
    void kvDtypeIsPartOfTheHash() {
        assertNotEquals(BlockHash.root(KvDtype.F16, 16), BlockHash.root(KvDtype.F32, 16));
        assertNotEquals(BlockHash.root(KvDtype.F16, 16), BlockHash.root(KvDtype.F16, 32));
    }

    /** Free blocks go out lowest first, whatever order they were freed in: a sequence's blocks ascend in the pool. */
    @Test
    void handsOutTheLowestFreeBlockFirst() {
        BlockManager m = manager(10);
        m.allocate(0, range(0, 40)); // blocks 0..4
        m.allocate(1, range(0, 8));  // block 5
        m.free(0);                   // released tail first: 4, 3, 2, 1, 0
        m.allocate(2, range(0, 24));
        assertArrayEquals(new int[] {0, 1, 2}, m.blockTable(2));
        m.free(1);
        assertTrue(m.appendSlot(2, 7) && m.appendSlot(2, 7), "room for two more tokens");
        assertArrayEquals(new int[] {0, 1, 2, 3}, m.blockTable(2));
        m.allocate(3, range(0, 9));
        assertArrayEquals(new int[] {4, 5}, m.blockTable(3), "block 5, freed last, before the never-used 6..9");
    }
}
