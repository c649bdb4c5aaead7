package io.modelopt.core.backend.cpu;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.HugePages;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.model.llama.LlamaWeights;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.SegmentAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CPU backend's load-time layouts of the weights: Q4_0, Q8_0 and F16 matrices copied into
 * interleaved or re-encoded forms the vector kernels read faster ({@link WeightMatrix#repacked};
 * why and by how much in docs/ARCHITECTURE.md), all in one huge-page region of the runner's arena.
 */
final class WeightRepacking {
    private static final Logger LOG = LoggerFactory.getLogger(WeightRepacking.class);

    /** System property: {@code false} reads Q4_0, Q8_0 and F16 weights in place instead of repacking them at load. */
    static final String PROPERTY = "modelopt.repack";

    private WeightRepacking() {}

    /** Whether weights of {@code mode} get repacked copies: the vector kernels' layouts, unless the property turns them off, and only if a matrix can be. */
    static boolean applies(KernelMode mode, LlamaWeights weights) {
        if (mode != KernelMode.VECTOR || !Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) return false;
        for (WeightMatrix m : weights.linearMatrices()) if (m.canRepack()) return true;
        return false;
    }

    /**
     * {@code weights} with each matrix that has a faster load-time layout repacked into
     * {@code arena}, the copying split over {@code pool}'s threads; the embedding lookup keeps
     * reading in place.
     */
    static LlamaWeights repack(LlamaWeights weights, Arena arena, ComputePool pool) {
        // one region for all copies: huge pages round up once per model, not once per matrix
        long total = 0;
        for (WeightMatrix m : weights.linearMatrices()) total += slot(m);
        if (total == 0) return weights;
        SegmentAllocator region = SegmentAllocator.slicingAllocator(HugePages.allocate(arena, total));
        return weights.withLinears(m -> repack(m, region, pool));
    }

    /** Room for one matrix's copy in the shared region (its bytes plus the most alignment padding can take). */
    private static long slot(WeightMatrix m) {
        long n = m.repackBytes();
        return n == 0 ? 0 : n + WeightMatrix.REPACK_ALIGNMENT;
    }

    /** One matrix repacked, its copied file pages released at once (so that load never holds both for the whole model). */
    private static WeightMatrix repack(WeightMatrix m, SegmentAllocator region, ComputePool pool) {
        WeightMatrix r = m.repacked(region, pool);
        if (m.canRepack() && !r.isRepacked()) {
            LOG.warn("{} holds a {} the re-encoded half layout cannot represent (|value| >= 128, infinite or NaN): read in place, decode is slower",
                    m, m.type() == GgmlType.F16 ? "weight" : "block scale");
        }
        r.unloadCopiedSource();
        return r;
    }
}
