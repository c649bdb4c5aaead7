package io.modelopt.kvcache;

import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Carries out {@link BlockCopy copy-on-writes} on a {@link KvStorage}: every layer's key and value
 * bytes of the source block, and its scales (stored block after block, {@code scalesPerBlock}
 * floats each), go to the destination block.
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
        long bytes = l.blockBytes();
        long scaleBytes = 4 * l.scales().scalesPerBlock(l.blockSize(), l.numKvHeads());
        for (int layer = 0; layer < l.numLayers(); layer++) {
            copy(storage.keys(layer), bytes, source, destination);
            copy(storage.values(layer), bytes, source, destination);
            if (scaleBytes > 0) {
                copy(storage.keyScales(layer), scaleBytes, source, destination);
                copy(storage.valueScales(layer), scaleBytes, source, destination);
            }
        }
    }

    private static void copy(MemorySegment seg, long bytes, int src, int dst) {
        MemorySegment.copy(seg, src * bytes, seg, dst * bytes, bytes);
    }
}
