package io.modelopt.kvcache;

import io.modelopt.core.kv.KvDtype;

import java.util.Arrays;

/**
 * Identity of a full block's contents for the prefix cache: the block's token ids chained to its
 * parent block's hash (so equal blocks after different prefixes differ, as vLLM's
 * {@code hash_block_tokens}), and, through the root hash, the KV dtype and block size (an INT8 block
 * is no stand-in for an F16 one). Equality compares the tokens and the parent hash too, so a 64-bit
 * collision of two different blocks cannot serve wrong keys and values; only a collision of parent
 * hashes as well could, with odds of about 2^-64 per pair.
 */
record BlockHash(long value, long parent, int[] tokens) {

    /** The parent hash of a sequence's first block. */
    static long root(KvDtype dtype, int blockSize) {
        return mix(mix(0x9E3779B97F4A7C15L ^ dtype.name().hashCode()) + blockSize);
    }

    /** The hash of {@code tokens[from .. from+blockSize)} after the block whose hash is {@code parent}. */
    static BlockHash of(long parent, int[] tokens, int from, int blockSize) {
        int[] t = Arrays.copyOfRange(tokens, from, from + blockSize);
        long h = mix(parent);
        for (int v : t) h = mix(h ^ (v & 0xFFFFFFFFL));
        return new BlockHash(h, parent, t);
    }

    /** SplitMix64's finalizer: every input bit reaches every output bit. */
    private static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Override public boolean equals(Object o) {
        return o instanceof BlockHash b && b.value == value && b.parent == parent && Arrays.equals(b.tokens, tokens);
    }

    @Override public int hashCode() { return Long.hashCode(value); }

    @Override public String toString() { return "BlockHash[" + Long.toHexString(value) + "]"; }
}
