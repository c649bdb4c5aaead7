package io.modelopt.core.kv;

import java.util.Objects;

/**
 * The shape of KV storage: per layer, {@code numBlocks} physical blocks of {@code blockSize}
 * token slots, each slot holding one entry of {@code headDim} elements per KV head. Slot
 * {@code s} is token {@code s % blockSize} of block {@code s / blockSize} (vLLM's
 * {@code slot_mapping} numbering). Within a block the entries are grouped by head,
 * {@code [kvHead][token][headDim]}, so that decode attention streams one head's positions
 * through contiguous memory (see docs/ARCHITECTURE.md): head {@code h}'s entry of slot {@code s}
 * is at byte {@code entryOffset(s) + h · headStride()} of the layer's key (or value) segment.
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

    /** Bytes from head h's entry of a slot to head h + 1's entry of the same slot: one head's block of entries. */
    public long headStride() { return entryBytes() * blockSize; }

    /** Bytes of one block (all heads) in one layer's key (or value) segment. */
    public long blockBytes() { return headStride() * numKvHeads; }

    /** Bytes of one layer's key (or value) segment. */
    public long layerBytes() { return blockBytes() * numBlocks; }

    /** Byte offset of head 0's entry of {@code slot}. */
    public long entryOffset(long slot) {
        return slot / blockSize * blockBytes() + slot % blockSize * entryBytes();
    }

    /** F32 scales of one layer's keys (or values): 0 for {@link KvScaleLayout#NONE}. */
    public long scalesPerLayer() { return scales.scalesPerLayer(numBlocks, blockSize, numKvHeads); }

    /** Index, in a layer's key (or value) scale segment, of KV head {@code h}'s scale of {@code slot}. */
    public long scaleIndex(long slot, int h) {
        return switch (scales) {
            case NONE -> throw new IllegalStateException(dtype + " entries have no scales");
            case PER_LAYER -> 0;
            case PER_LAYER_HEAD -> h;
            case PER_BLOCK_HEAD -> slot / blockSize * numKvHeads + h;
            case PER_TOKEN_HEAD -> (slot / blockSize * numKvHeads + h) * blockSize + slot % blockSize;
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
