package io.modelopt.kvcache;

import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Carries out {@link BlockCopy copy-on-writes} on a {@link KvStorage}: every layer's key and value
 * entries of the source block, head by head ({@link KvLayout}: a block's entries of one head are
 * contiguous, its heads {@code headStride} apart), and their per-token or per-block scales, stored
 * like the entries, go to the destination block.
 */
public final class BlockCopier {
    private BlockCopier() {}

    public static void copy(KvStorage storage, List<BlockCopy> copies) {
        for (BlockCopy c : copies) copy(storage, c.source(), c.destination());
    }

    public static void copy(KvStorage storage, int source, int destination) {
        KvLayout l = storage.layout();
        java.util.Objects.checkIndex(source, l.numBlocks());
        java.util.Objects.checkIndex(destination, l.numBlocks());
        long bytes = l.blockBytesPerHead(), stride = l.headStride();
        long scalesPerHead = l.scales().scalesPerBlock(l.blockSize(), l.numKvHeads()) / l.numKvHeads();
        long scaleBytes = 4 * scalesPerHead, scaleStride = 4 * scalesPerHead * l.numBlocks();
        for (int layer = 0; layer < l.numLayers(); layer++) {
            for (int h = 0; h < l.numKvHeads(); h++) {
                copy(storage.keys(layer), h * stride, bytes, source, destination);
                copy(storage.values(layer), h * stride, bytes, source, destination);
                if (scaleBytes > 0) {
                    copy(storage.keyScales(layer), h * scaleStride, scaleBytes, source, destination);
                    copy(storage.valueScales(layer), h * scaleStride, scaleBytes, source, destination);
                }
            }
        }
    }

    private static void copy(MemorySegment seg, long base, long bytes, int src, int dst) {
        MemorySegment.copy(seg, base + src * bytes, seg, base + dst * bytes, bytes);
    }
}
