package io.modelopt.kvcache;

import io.modelopt.core.kv.KvDtype;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Hands out the physical blocks of a paged KV cache to sequences, as vLLM's {@code KVCacheManager}
 * and {@code BlockPool}: pure bookkeeping, no memory. The storage it indexes is a core
 * {@link io.modelopt.core.kv.KvStorage} of {@link #numBlocks()} blocks of {@link #blockSize()} slots
 * (allocated by the backend, {@link io.modelopt.core.engine.ModelRunner#newKvStorage}); each step's {@link io.modelopt.core.engine.Batch} carries
 * {@link #blockTable(int)} of every sequence in it.
 *
 * <h2>Life of a sequence</h2>
 * <ol>
 *   <li>{@link #allocate(int, int[])} reserves slots for the whole prompt and returns how many of
 *       its leading tokens are already in the cache (prefix hit): the caller prefills only
 *       {@code prompt[cached ..]}, starting at position {@code cached}.</li>
 *   <li>After each forward step, {@link #markComputed(int, int)} says how many positions now hold
 *       keys and values; full blocks up to there become reusable by later prompts.</li>
 *   <li>Before each decode step, {@link #appendSlots(int, int[])} reserves slots for the tokens about to be fed.</li>
 *   <li>{@link #fork(int, int)} starts a parallel sample that shares all blocks of its parent.</li>
 *   <li>{@link #free(int)} when done; its full blocks stay cached (LRU) until their memory is needed.</li>
 * </ol>
 *
 * <h2>Out of blocks</h2>
 * Running out is a normal condition: {@link #allocate} returns {@link #OUT_OF_BLOCKS} and
 * {@link #appendSlots} returns {@code false}, both leaving every state unchanged, for the
 * scheduler to preempt or wait. {@link #canAllocate} and {@link #canAppend} ask without changing anything.
 * Exceptions are for misuse only (unknown or duplicate sequence ids, negative counts).
 *
 * <h2>Copy-on-write</h2>
 * A fork shares every block of its parent, the last partially filled one included, by reference
 * count. Full blocks are never written again, so they stay shared. When a sequence appends into a
 * partially filled block it shares, {@link #appendSlots} gives it a fresh block and queues a
 * {@link BlockCopy}; the caller takes the queue with {@link #drainCopies()} and must apply it to the
 * storage ({@link BlockCopier}) <em>before</em> the forward step that writes the new slots.
 *
 * <h2>Prefix caching</h2>
 * A full block is identified by a hash of its tokens chained to its parent block's hash, seeded by
 * the KV dtype and block size ({@link BlockHash}). A block is registered once {@link #markComputed}
 * says its keys and values are written (not at allocation: another prompt must not read a block
 * whose prefill has not run). At most {@code prompt.length - 1} tokens are served from the cache,
 * so the last prompt token is always computed and gives logits. Freed registered blocks wait in an
 * LRU (the last block of a sequence first in line to go) and are evicted only when a fresh block
 * is needed and no never-cached block is free. {@link #stats()} counts hits, misses and evictions.
 *
 * <p>Not thread-safe: one scheduler step at a time. Sequence ids are any non-negative ints (the
 * {@code Batch} sequence ids).
 */
public final class BlockManager {
    /** What {@link #allocate} returns when the free blocks do not suffice (nothing changed). */
    public static final int OUT_OF_BLOCKS = -1;
    public static final int DEFAULT_BLOCK_SIZE = 16;
    public static final int MIN_BLOCK_SIZE = 8, MAX_BLOCK_SIZE = 256;

    private final int numBlocks, blockSize;
    private final KvDtype dtype;
    private final boolean prefixCaching;
    private final long rootHash;

    private final int[] refCounts;
    /** Registered hash of each block, null if none. */
    private final BlockHash[] hashes;
    /**
     * Free blocks holding no registered hash (taken first), lowest index first: a sequence then gets
     * ascending physical blocks wherever the pool allows, which the attention kernels read as one
     * forward stream (a queue handed a freed sequence's blocks back in reverse, tail first). The
     * count is kept beside the set because {@link #numFreeBlocks} runs on every append.
     */
    private final java.util.BitSet freeUncached = new java.util.BitSet();
    private int freeUncachedCount;
    /** Free blocks holding a registered hash, least recently freed first (evicted first). */
    private final LinkedHashSet<Integer> freeCached = new LinkedHashSet<>();
    private final Map<BlockHash, Integer> hashToBlock = new HashMap<>();
    private final Map<Integer, Sequence> sequences = new HashMap<>();
    private final List<BlockCopy> pendingCopies = new ArrayList<>();
    private long queriedBlocks, hitBlocks, evictions;

    /** Per sequence: its tokens (with slots), its blocks in logical order, how many positions are computed, the hashes of its full computed blocks. */
    private static final class Sequence {
        int[] tokens;
        int length;
        int[] blocks;
        int numBlocks;
        int computed;
        /** blockHashes[i] for i < hashedBlocks: hash of logical block i (registered or not). */
        BlockHash[] blockHashes;
        int hashedBlocks;

        Sequence(int capacityTokens, int capacityBlocks) {
            tokens = new int[Math.max(16, capacityTokens)];
            blocks = new int[Math.max(4, capacityBlocks)];
            blockHashes = new BlockHash[blocks.length];
        }

        Sequence copy() {
            Sequence s = new Sequence(0, 0);
            s.tokens = tokens.clone();
            s.length = length;
            s.blocks = blocks.clone();
            s.numBlocks = numBlocks;
            s.computed = computed;
            s.blockHashes = blockHashes.clone();
            s.hashedBlocks = hashedBlocks;
            return s;
        }

        void addToken(int t) {
            if (length == tokens.length) tokens = Arrays.copyOf(tokens, length * 2);
            tokens[length++] = t;
        }

        void addBlock(int b) {
            if (numBlocks == blocks.length) {
                blocks = Arrays.copyOf(blocks, numBlocks * 2);
                blockHashes = Arrays.copyOf(blockHashes, blocks.length);
            }
            blocks[numBlocks++] = b;
        }
    }

    private BlockManager(Builder b) {
        this.numBlocks = b.numBlocks;
        this.blockSize = b.blockSize;
        this.dtype = b.dtype;
        this.prefixCaching = b.prefixCaching;
        this.rootHash = BlockHash.root(dtype, blockSize);
        this.refCounts = new int[numBlocks];
        this.hashes = new BlockHash[numBlocks];
        freeUncached.set(0, numBlocks);
        freeUncachedCount = numBlocks;
    }

    public static Builder builder() { return new Builder(); }

    /** Physical blocks in the pool. */
    public int numBlocks() { return numBlocks; }

    /** Token slots per block. */
    public int blockSize() { return blockSize; }

    public KvDtype kvDtype() { return dtype; }

    public boolean prefixCaching() { return prefixCaching; }

    /** Blocks a new allocation can take: never-cached free blocks plus free cached ones (evictable). */
    public int numFreeBlocks() { return freeUncachedCount + freeCached.size(); }

    /** Blocks referenced by at least one sequence: {@code numBlocks() - numFreeBlocks()}. */
    public int numUsedBlocks() { return numBlocks - numFreeBlocks(); }

    /** Blocks needed to hold {@code tokens} tokens: ceil(tokens / blockSize). */
    public int blocksFor(int tokens) { return (int) ((tokens + (long) blockSize - 1) / blockSize); }

    /** The live sequence ids, in no particular order. */
    public int[] sequenceIds() { return sequences.keySet().stream().mapToInt(Integer::intValue).toArray(); }

    public boolean contains(int seq) { return sequences.containsKey(seq); }

    /** Tokens of {@code seq} that have slots (prompt plus appended). */
    public int length(int seq) { return seq(seq).length; }

    /** Positions of {@code seq} whose keys and values are written, as last told by {@link #markComputed} (or served from the prefix cache). */
    public int computedLength(int seq) { return seq(seq).computed; }

    /** Token ids of {@code seq} that have slots, in order (a copy). */
    public int[] tokens(int seq) {
        Sequence s = seq(seq);
        return Arrays.copyOf(s.tokens, s.length);
    }

    /**
     * The physical blocks of {@code seq} in logical order, a fresh array to pass to
     * {@link io.modelopt.core.engine.Batch.Builder#blockTable(int, int[])}: position {@code p}
     * lives in slot {@code table[p / blockSize] * blockSize + p % blockSize}.
     */
    public int[] blockTable(int seq) {
        Sequence s = seq(seq);
        return Arrays.copyOf(s.blocks, s.numBlocks);
    }

    /** The slot of position {@code pos} of {@code seq} ({@code pos < length(seq)}). */
    public long slot(int seq, int pos) {
        Sequence s = seq(seq);
        if (pos < 0 || pos >= s.length) throw new IndexOutOfBoundsException("sequence " + seq + ": position " + pos + " outside its " + s.length + " slots");
        return (long) s.blocks[pos / blockSize] * blockSize + pos % blockSize;
    }

    /** References to physical block {@code block} (sequences whose table holds it). */
    public int refCount(int block) {
        Objects.checkIndex(block, numBlocks);
        return refCounts[block];
    }

    /** Whether {@link #allocate} of {@code prompt} would succeed now. */
    public boolean canAllocate(int[] prompt) {
        Objects.requireNonNull(prompt, "prompt");
        return blocksToTake(prompt, lookup(prompt)) <= numFreeBlocks();
    }

    /**
     * Registers sequence {@code seq} with slots for all of {@code prompt}, reusing the longest
     * cached prefix of full blocks (at most {@code prompt.length - 1} tokens).
     *
     * @return the number of leading prompt tokens already cached (a multiple of the block size,
     *         0 without a hit): prefill starts at that position; or {@link #OUT_OF_BLOCKS} if the
     *         free blocks do not suffice, in which case nothing changed
     * @throws IllegalArgumentException if {@code seq} is negative or already allocated, or the prompt is empty
     */
    public int allocate(int seq, int[] prompt) {
        Objects.requireNonNull(prompt, "prompt");
        if (seq < 0) throw new IllegalArgumentException("sequence id " + seq + " must be >= 0");
        if (sequences.containsKey(seq)) throw new IllegalArgumentException("sequence " + seq + " is already allocated (free it first)");
        if (prompt.length == 0) throw new IllegalArgumentException("sequence " + seq + ": cannot allocate an empty prompt");
        List<Integer> hits = lookup(prompt);
        if (blocksToTake(prompt, hits) > numFreeBlocks()) return OUT_OF_BLOCKS;
        Sequence s = new Sequence(prompt.length, blocksFor(prompt.length));
        for (int t : prompt) s.addToken(t);
        long parent = rootHash;
        for (int b : hits) {
            pin(b);
            s.addBlock(b);
            s.blockHashes[s.hashedBlocks++] = hashes[b];
            parent = hashes[b].value();
        }
        for (int b : takeFreshBlocks(blocksFor(prompt.length) - hits.size())) s.addBlock(b);
        s.computed = hits.size() * blockSize;
        if (prefixCaching) {
            queriedBlocks += (prompt.length - 1) / blockSize;
            hitBlocks += hits.size();
        }
        sequences.put(seq, s);
        return s.computed;
    }

    /** Whether {@link #appendSlots} of {@code numTokens} tokens to {@code seq} would succeed now. */
    public boolean canAppend(int seq, int numTokens) {
        if (numTokens < 0) throw new IllegalArgumentException("cannot append " + numTokens + " tokens");
        return blocksToAppend(seq(seq), numTokens) <= numFreeBlocks();
    }

    /**
     * Reserves slots for {@code newTokens}, fed next at positions {@code length(seq) ..}. May queue a
     * copy-on-write ({@link #drainCopies()}) when the last block is partially filled and shared.
     *
     * @return false if the free blocks do not suffice (nothing changed): a normal condition
     */
    public boolean appendSlots(int seq, int[] newTokens) {
        Objects.requireNonNull(newTokens, "newTokens");
        Sequence s = seq(seq);
        if (blocksToAppend(s, newTokens.length) > numFreeBlocks()) return false;
        if (newTokens.length == 0) return true;
        if (s.length % blockSize != 0) {
            int last = s.blocks[s.numBlocks - 1];
            if (refCounts[last] > 1) {
                int fresh = takeFreshBlock();
                pendingCopies.add(new BlockCopy(last, fresh));
                release(last);
                s.blocks[s.numBlocks - 1] = fresh;
            } else if (hashes[last] != null) {
                unregister(last); // a partial block cannot carry a full block's hash (only after truncate)
            }
        }
        int[] fresh = takeFreshBlocks(blocksFor(s.length + newTokens.length) - s.numBlocks);
        int next = 0;
        for (int t : newTokens) {
            if (s.length == s.numBlocks * blockSize) s.addBlock(fresh[next++]);
            s.addToken(t);
        }
        return true;
    }

    /** {@link #appendSlots(int, int[])} of one token (a decode step). */
    public boolean appendSlot(int seq, int token) { return appendSlots(seq, new int[] {token}); }

    /**
     * Records that positions {@code 0 .. computedTokens-1} of {@code seq} hold keys and values
     * (call after each forward step); full blocks among them become prefix-cache entries.
     * Never lowers the computed length (use {@link #truncate}).
     */
    public void markComputed(int seq, int computedTokens) {
        Sequence s = seq(seq);
        if (computedTokens < 0 || computedTokens > s.length) {
            throw new IllegalArgumentException("sequence " + seq + ": computed length " + computedTokens + " outside [0, " + s.length + "]");
        }
        s.computed = Math.max(s.computed, computedTokens);
        if (!prefixCaching) return;
        int full = s.computed / blockSize;
        while (s.hashedBlocks < full) {
            int i = s.hashedBlocks;
            long parent = i == 0 ? rootHash : s.blockHashes[i - 1].value();
            BlockHash h = BlockHash.of(parent, s.tokens, i * blockSize, blockSize);
            s.blockHashes[i] = h;
            s.hashedBlocks++;
            int b = s.blocks[i];
            // a duplicate of a block already cached (two prompts computed at once) stays unregistered
            if (hashes[b] == null && !hashToBlock.containsKey(h)) {
                hashes[b] = h;
                hashToBlock.put(h, b);
            }
        }
    }

    /**
     * Starts {@code child} as a copy of {@code parent}: same tokens, same blocks (shared, reference
     * counted), same computed length. Takes no block; the first append of either into a shared
     * partial block copies it.
     *
     * @throws IllegalArgumentException if {@code parent} is unknown or {@code child} exists or is negative
     */
    public void fork(int parent, int child) {
        Sequence p = seq(parent);
        if (child < 0) throw new IllegalArgumentException("sequence id " + child + " must be >= 0");
        if (sequences.containsKey(child)) throw new IllegalArgumentException("cannot fork " + parent + " into " + child + ": sequence " + child + " exists");
        Sequence c = p.copy();
        for (int i = 0; i < c.numBlocks; i++) refCounts[c.blocks[i]]++;
        sequences.put(child, c);
    }

    /**
     * Keeps the first {@code length} tokens of {@code seq} (e.g. rejected draft tokens), releasing
     * the blocks past them.
     */
    public void truncate(int seq, int length) {
        Sequence s = seq(seq);
        if (length < 0 || length > s.length) throw new IllegalArgumentException("sequence " + seq + ": cannot truncate to " + length + " (it holds " + s.length + ")");
        int keep = blocksFor(length);
        for (int i = s.numBlocks - 1; i >= keep; i--) release(s.blocks[i]);
        s.numBlocks = keep;
        s.length = length;
        s.computed = Math.min(s.computed, length);
        s.hashedBlocks = Math.min(s.hashedBlocks, length / blockSize);
    }

    /** Forgets {@code seq}, releasing its blocks (registered ones stay cached until evicted). Unknown ids are an error. */
    public void free(int seq) {
        Sequence s = seq(seq);
        for (int i = s.numBlocks - 1; i >= 0; i--) release(s.blocks[i]); // tail first: evicted first
        sequences.remove(seq);
    }

    /** The queued copy-on-writes, oldest first, emptying the queue: apply them to the storage before the next forward. */
    public List<BlockCopy> drainCopies() {
        List<BlockCopy> out = List.copyOf(pendingCopies);
        pendingCopies.clear();
        return out;
    }

    /** The queued copy-on-writes, oldest first, without taking them. */
    public List<BlockCopy> pendingCopies() { return List.copyOf(pendingCopies); }

    public PrefixCacheStats stats() {
        return new PrefixCacheStats(queriedBlocks, hitBlocks, hitBlocks * blockSize, evictions, hashToBlock.size());
    }

    /** Forgets every registered hash (free cached blocks become plain free blocks) and zeroes the counters. */
    public void resetPrefixCache() {
        for (BlockHash h : hashToBlock.keySet()) hashes[hashToBlock.get(h)] = null;
        hashToBlock.clear();
        for (int b : freeCached) freeUncached.set(b);
        freeUncachedCount += freeCached.size();
        freeCached.clear();
        for (Sequence s : sequences.values()) s.hashedBlocks = 0;
        queriedBlocks = hitBlocks = evictions = 0;
    }

    // ---- internals ----

    private Sequence seq(int seq) {
        Sequence s = sequences.get(seq);
        if (s == null) throw new IllegalArgumentException("sequence " + seq + " is not allocated");
        return s;
    }

    /** The cached blocks serving the longest prefix of full blocks within {@code prompt[0 .. length-1)}. */
    private List<Integer> lookup(int[] prompt) {
        if (!prefixCaching || hashToBlock.isEmpty()) return List.of();
        List<Integer> hits = new ArrayList<>();
        long parent = rootHash;
        for (int i = 0, n = (prompt.length - 1) / blockSize; i < n; i++) {
            Integer b = hashToBlock.get(BlockHash.of(parent, prompt, i * blockSize, blockSize));
            if (b == null) break;
            hits.add(b);
            parent = hashes[b].value();
        }
        return hits;
    }

    /** Free blocks an allocation consumes: fresh blocks plus hits now sitting free in the LRU. */
    private int blocksToTake(int[] prompt, List<Integer> hits) {
        int freeHits = 0;
        for (int b : hits) if (refCounts[b] == 0) freeHits++;
        return blocksFor(prompt.length) - hits.size() + freeHits;
    }

    private int blocksToAppend(Sequence s, int n) {
        if (n == 0) return 0;
        int cow = s.length % blockSize != 0 && refCounts[s.blocks[s.numBlocks - 1]] > 1 ? 1 : 0;
        return blocksFor(s.length + n) - s.numBlocks + cow;
    }

    /**
     * {@code n} blocks of {@link #takeFreshBlock}, in ascending physical order. Which blocks are
     * taken (and evicted) does not change; their order in the table does: a freed sequence returns
     * its blocks tail first, so taken one by one they would come back descending, and decode
     * attention, which reads a KV head's entries of physically consecutive blocks as one run
     * ({@link io.modelopt.core.kv.KvLayout}), would read 2 KB runs instead of the whole prompt's
     * (small125m, 2,000 positions: 98–107 against 131–137 t/s on alternate bench runs).
     */
    private static final int[] NO_BLOCKS = {};

    private int[] takeFreshBlocks(int n) {
        if (n <= 0) return NO_BLOCKS;
        int[] blocks = new int[n];
        for (int i = 0; i < blocks.length; i++) blocks[i] = takeFreshBlock();
        Arrays.sort(blocks);
        return blocks;
    }

    /** Takes a block for new data: a never-cached free one, else evicts the least recently freed cached one. */
    private int takeFreshBlock() {
        int b;
        if (freeUncachedCount > 0) {
            b = freeUncached.nextSetBit(0);
            freeUncached.clear(b);
            freeUncachedCount--;
        } else {
            Iterator<Integer> it = freeCached.iterator();
            if (!it.hasNext()) throw new IllegalStateException("no free block (a caller skipped the free-count check)");
            b = it.next();
            it.remove();
            unregister(b);
            evictions++;
        }
        refCounts[b] = 1;
        return b;
    }

    /** Takes a reference to a cached block (a prefix hit), out of the LRU if it was free. */
    private void pin(int b) {
        if (refCounts[b]++ == 0) freeCached.remove(b);
    }

    private void release(int b) {
        if (refCounts[b] <= 0) throw new IllegalStateException("block " + b + " released with reference count " + refCounts[b]);
        if (--refCounts[b] == 0) {
            if (hashes[b] != null) freeCached.add(b);
            else {
                freeUncached.set(b);
                freeUncachedCount++;
            }
        }
    }

    private void unregister(int b) {
        hashToBlock.remove(hashes[b]);
        hashes[b] = null;
    }

    @Override public String toString() {
        return "BlockManager[" + numBlocks + " blocks x " + blockSize + " slots, " + dtype + ", " + numUsedBlocks() + " used, "
                + numFreeBlocks() + " free (" + freeCached.size() + " cached), " + sequences.size() + " sequences]";
    }

    /** Configuration of a {@link BlockManager}; {@link #numBlocks} is required (from a {@link KvBudget} or chosen). */
    public static final class Builder {
        private int numBlocks = -1, blockSize = DEFAULT_BLOCK_SIZE;
        private KvDtype dtype = KvDtype.F16;
        private boolean prefixCaching = true;

        private Builder() {}

        public Builder numBlocks(int n) { this.numBlocks = n; return this; }

        /** Token slots per block: a power of two from 8 to 256; 16 by default. */
        public Builder blockSize(int slots) { this.blockSize = slots; return this; }

        /** The KV dtype (part of every block hash); F16 by default. */
        public Builder kvDtype(KvDtype dtype) { this.dtype = Objects.requireNonNull(dtype, "dtype"); return this; }

        /** Reuse cached prefixes (on by default). */
        public Builder prefixCaching(boolean on) { this.prefixCaching = on; return this; }

        public BlockManager build() {
            checkBlockSize(blockSize);
            if (numBlocks < 1) throw new IllegalArgumentException("a block manager needs at least 1 block, got " + numBlocks);
            return new BlockManager(this);
        }
    }

    /** Throws unless {@code blockSize} is a power of two from 8 to 256. */
    public static void checkBlockSize(int blockSize) {
        if (blockSize < MIN_BLOCK_SIZE || blockSize > MAX_BLOCK_SIZE || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("KV block size " + blockSize + " must be a power of two from " + MIN_BLOCK_SIZE + " to " + MAX_BLOCK_SIZE
                    + " (8, 16, 32, 64, 128 or 256)");
        }
    }
}
