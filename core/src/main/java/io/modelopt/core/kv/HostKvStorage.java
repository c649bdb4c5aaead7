package io.modelopt.core.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * KV storage in host memory: per layer one key and one value segment (and their scale segments
 * when the layout has scales), all from one shared {@link Arena} this object owns, so that
 * {@link #close()} frees everything at once rather than at some later GC. Shared because the
 * compute pool's workers write and read it. Memory starts zeroed.
 */
public final class HostKvStorage implements KvStorage {
    private final KvLayout layout;
    private final Arena arena;
    private final MemorySegment[] keys, values, keyScales, valueScales;
    private final Runnable onClose;

    /** Allocates {@code layout}; {@code onClose} (may be null) runs once when closed, e.g. to update a backend's memory count. */
    public HostKvStorage(KvLayout layout, Runnable onClose) {
        this.layout = java.util.Objects.requireNonNull(layout, "layout");
        this.onClose = onClose;
        int n = layout.numLayers();
        this.arena = Arena.ofShared();
        this.keys = new MemorySegment[n];
        this.values = new MemorySegment[n];
        this.keyScales = new MemorySegment[n];
        this.valueScales = new MemorySegment[n];
        try {
            long scales = 4 * layout.scalesPerLayer();
            for (int l = 0; l < n; l++) {
                keys[l] = arena.allocate(layout.layerBytes(), 64);
                values[l] = arena.allocate(layout.layerBytes(), 64);
                keyScales[l] = scales == 0 ? MemorySegment.NULL : arena.allocate(scales, 64);
                valueScales[l] = scales == 0 ? MemorySegment.NULL : arena.allocate(scales, 64);
                if (layout.scales().isStatic()) { // static scales start at 1.0 (vLLM's uncalibrated fp8 cache)
                    keyScales[l].fill((byte) 0);
                    for (long i = 0; i < layout.scalesPerLayer(); i++) {
                        keyScales[l].setAtIndex(F32_LE, i, 1f);
                        valueScales[l].setAtIndex(F32_LE, i, 1f);
                    }
                }
            }
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new IllegalStateException("cannot allocate " + layout.byteSize() + " bytes of KV storage (" + layout + ")", e);
        }
    }

    public HostKvStorage(KvLayout layout) { this(layout, null); }

    @Override public KvLayout layout() { return layout; }
    @Override public MemorySegment keys(int layer) { return keys[layer]; }
    @Override public MemorySegment values(int layer) { return values[layer]; }
    @Override public MemorySegment keyScales(int layer) { return keyScales[layer]; }
    @Override public MemorySegment valueScales(int layer) { return valueScales[layer]; }

    @Override public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
            if (onClose != null) onClose.run();
        }
    }

    @Override public String toString() {
        return "HostKvStorage[" + layout.numLayers() + " layers, " + layout.numBlocks() + " blocks x " + layout.blockSize() + " slots, "
                + layout.numKvHeads() + " heads x " + layout.headDim() + ", " + layout.dtype() + ", " + byteSize() + " B]";
    }
}
