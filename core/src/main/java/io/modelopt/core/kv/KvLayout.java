package io.modelopt.core.kv;

import java.util.Objects;

/**
 * The shape of KV storage: per layer, {@code numBlocks} physical blocks of {@code blockSize}
 * token slots, each slot holding one entry of {@code headDim} elements per KV head. Slot
 * {@code s} is token {@code s % blockSize} of block {@code s / blockSize} (vLLM's
 * {@code slot_mapping} numbering). A layer's key (or value) segment is grouped by head first,
 * {@code [kvHead][slot][headDim]}: head {@code h}'s entry of slot {@code s} is at byte
 * {@code entryOffset(s) + h · headStride()}, with {@code entryOffset(s) = s · entryBytes()} and
 * {@code headStride()} one head's entries of all slots. So one head's entries of a block are
 * contiguous (as in vLLM's blocks), and so are those of consecutive blocks: decode attention
 * streams a head's positions through memory in runs as long as the runs of consecutive physical
 * blocks in the block table, not one block's 2 KB at a time (see docs/ARCHITECTURE.md).
 *
 * <p>A contiguous cache of S sequences × P positions is the same layout with S blocks of P slots.
 *
 * @param scales room for per-block or per-token scales of quantized entries, in separate segments
 */
public record KvLayout(int numLayers, int numKvHeads, int headDim, int numBlocks, int blockSize, KvDtype dtype, KvScaleLayout scales) {

    public KvLayout {
        positive("numLayers", numLayers);
        positive("numKvHeads", numKvHeads);
        positive("headDim", headDim);
        positive("numBlocks", numBlocks);
        positive("blockSize", blockSize);
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(scales, "scales");
        if (!dtype.supports(scales)) {
            throw new IllegalArgumentException("KV dtype " + dtype + " cannot be stored with " + scales + " scales (it takes " + dtype.defaultScales()
                    + (dtype == KvDtype.FP8_E4M3 ? " or PER_LAYER_HEAD" : "") + ")");
        }
        try {
            Math.multiplyExact(Math.multiplyExact(Math.multiplyExact((long) headDim * dtype.bytes(), (long) blockSize), (long) numKvHeads),
                    Math.multiplyExact((long) numBlocks, 2L * numLayers));
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("KV storage of " + numLayers + " layers x " + numBlocks + " blocks x " + blockSize
                    + " slots x " + numKvHeads + " heads x " + headDim + " x " + dtype + " overflows a long");
        }
    }

    /** Storage of {@code dtype} with its {@link KvDtype#defaultScales() default scales}. */
    public static KvLayout of(int numLayers, int numKvHeads, int headDim, int numBlocks, int blockSize, KvDtype dtype) {
        return new KvLayout(numLayers, numKvHeads, headDim, numBlocks, blockSize, dtype, dtype.defaultScales());
    }

    private static void positive(String what, int v) {
        if (v < 1) throw new IllegalArgumentException("KV storage " + what + " (" + v + ") must be >= 1");
    }

    /** Elements of a slot over all heads. */
    public int kvDim() { return numKvHeads * headDim; }

    /** Slots in all: numBlocks × blockSize. */
    public long slots() { return (long) numBlocks * blockSize; }

    /** Bytes of one head's entry. */
    public long entryBytes() { return (long) headDim * dtype.bytes(); }

    /** Bytes from head h's entry of a slot to head h + 1's entry of the same slot: one head's entries of every slot. */
    public long headStride() { return entryBytes() * slots(); }

    /** Bytes of one block's entries of one head (contiguous; a block's heads are {@link #headStride()} apart). */
    public long blockBytesPerHead() { return entryBytes() * blockSize; }

    /** Bytes of one block (all heads) in one layer's key (or value) segment. */
    public long blockBytes() { return blockBytesPerHead() * numKvHeads; }

    /** Bytes of one layer's key (or value) segment. */
    public long layerBytes() { return blockBytes() * numBlocks; }

    /** Byte offset of head 0's entry of {@code slot}. */
    public long entryOffset(long slot) {
        return slot * entryBytes();
    }

    /** F32 scales of one layer's keys (or values): 0 for {@link KvScaleLayout#NONE}. */
    public long scalesPerLayer() { return scales.scalesPerLayer(numBlocks, blockSize, numKvHeads); }

    /** Index, in a layer's key (or value) scale segment, of KV head {@code h}'s scale of {@code slot}. */
    public long scaleIndex(long slot, int h) {
        return switch (scales) {
            case NONE -> throw new IllegalStateException(dtype + " entries have no scales");
            case PER_LAYER -> 0;
            case PER_LAYER_HEAD -> h;
            case PER_BLOCK_HEAD -> h * (long) numBlocks + slot / blockSize;
            case PER_TOKEN_HEAD -> h * slots() + slot;
        };
    }

    /**
     * KV bytes one token adds over all layers, keys and values, scales included (per-token and
     * per-block scales amortized over the block; static per-layer scales count as 0).
     */
    public double bytesPerToken() {
        double perLayer = (double) kvDim() * dtype.bytes() + 4.0 * scales.scalesPerBlock(blockSize, numKvHeads) / blockSize;
        return 2.0 * numLayers * perLayer;
    }

    /** Bytes of one block over all layers, keys, values and their per-block scales. */
    public long bytesPerBlock() {
        return 2L * numLayers * (blockBytes() + 4 * scales.scalesPerBlock(blockSize, numKvHeads));
    }

    /** Bytes of keys, values and their scales over all layers. */
    public long byteSize() { return 2L * numLayers * (layerBytes() + 4 * scalesPerLayer()); }
}
