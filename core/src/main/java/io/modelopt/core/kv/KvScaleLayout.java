package io.modelopt.core.kv;

/**
 * Where the dequantization scales of a quantized KV cache (INT8, FP8-E4M3: coming with the
 * kvcache module) live beside the entries. F16 and F32 entries need none. One F32 scale per
 * block and KV head is vLLM's per-tensor-like scaling at block granularity; one per token and KV
 * head follows each entry's range.
 */
public enum KvScaleLayout {
    NONE,
    PER_BLOCK_HEAD,
    PER_TOKEN_HEAD;

    /** F32 scales per block of {@code blockSize} tokens and {@code numKvHeads} heads. */
    public long scalesPerBlock(int blockSize, int numKvHeads) {
        return switch (this) {
            case NONE -> 0;
            case PER_BLOCK_HEAD -> numKvHeads;
            case PER_TOKEN_HEAD -> (long) blockSize * numKvHeads;
        };
    }
}
