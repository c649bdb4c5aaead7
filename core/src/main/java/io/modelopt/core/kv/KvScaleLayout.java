package io.modelopt.core.kv;

/**
 * Where the F32 dequantization scales of a quantized KV cache live, in each layer's key (and
 * value) scale segment beside the entries. F16, BF16 and F32 entries need none.
 * <ul>
 *   <li>{@link #PER_TOKEN_HEAD}: one per slot and KV head, stored like the entries
 *       ({@code [kvHead][slot]}), so head {@code h}'s scale of a slot has index
 *       {@code (entryOffset(slot) + h·headStride) / entryBytes}; follows each entry's range (INT8).</li>
 *   <li>{@link #PER_BLOCK_HEAD}: one per block and KV head ({@code [kvHead][block]}); reserved (the
 *       storage does not write it: see {@link KvDtype#INT8} for why per token was chosen).</li>
 *   <li>{@link #PER_LAYER}: one per layer (index 0), static: 1.0 or calibrated (FP8, vLLM's default).</li>
 *   <li>{@link #PER_LAYER_HEAD}: one per layer and KV head (index {@code h}), static.</li>
 * </ul>
 */
public enum KvScaleLayout {
    NONE,
    PER_BLOCK_HEAD,
    PER_TOKEN_HEAD,
    PER_LAYER,
    PER_LAYER_HEAD;

    /** F32 scales that belong to one block of {@code blockSize} tokens and {@code numKvHeads} heads (0 for static scales). */
    public long scalesPerBlock(int blockSize, int numKvHeads) {
        return switch (this) {
            case NONE, PER_LAYER, PER_LAYER_HEAD -> 0;
            case PER_BLOCK_HEAD -> numKvHeads;
            case PER_TOKEN_HEAD -> (long) blockSize * numKvHeads;
        };
    }

    /** F32 scales of one layer's keys (or values). */
    public long scalesPerLayer(int numBlocks, int blockSize, int numKvHeads) {
        return switch (this) {
            case NONE -> 0;
            case PER_LAYER -> 1;
            case PER_LAYER_HEAD -> numKvHeads;
            case PER_BLOCK_HEAD, PER_TOKEN_HEAD -> scalesPerBlock(blockSize, numKvHeads) * numBlocks;
        };
    }

    /** Whether the scales are fixed per layer (set once, not by writes). */
    public boolean isStatic() { return this == PER_LAYER || this == PER_LAYER_HEAD; }
}
