package io.modelopt.core.engine;

/**
 * What a {@link ModelRunner} holds, in bytes, as its backend counts it (CPU: the arenas and
 * arrays it owns; a GPU backend: its device allocations).
 *
 * @param weightBytes   the model's tensors as bound from the files (mapped in place, not copied)
 * @param repackedBytes load-time copies of weights in a backend's own layout (beyond weightBytes)
 * @param kvBytes       KV storage allocated through the runner ({@link ModelRunner#newKvCache},
 *                      {@link ModelRunner#newKvStorage}, a block runner's scratch) and not yet closed
 * @param scratchBytes  activation buffers and per-thread scratch, allocated once at load
 */
public record RunnerMemory(long weightBytes, long repackedBytes, long kvBytes, long scratchBytes) {
    /** Everything together. */
    public long totalBytes() { return weightBytes + repackedBytes + kvBytes + scratchBytes; }
}
