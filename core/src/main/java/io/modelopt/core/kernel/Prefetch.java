package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A software prefetch for Java, which has no prefetch instruction: one byte loaded from every
 * cache line of the next weight row before the current row is computed. The loads are
 * independent, so the core has all of the row's misses in flight at once instead of finding
 * them one by one as the kernel reaches them; the result feeds a field so that the JIT keeps
 * the loads. Measured on the 2-core AVX-512 VM, Q4_0 GEMV from memory (1 GiB of weights):
 * 2.5-2.7 GB/s without, 3.7 GB/s with (one thread). The prefill GEMM, compute bound, does without.
 */
final class Prefetch {
    private Prefetch() {}

    private static final int LINE = 64;

    /** Read by nobody; written (almost never) so that the loads are not dead code. */
    static int sink;

    static void touch(MemorySegment m, long from, long bytes) {
        int acc = 0;
        for (long o = 0; o < bytes; o += LINE) acc += m.get(ValueLayout.JAVA_BYTE, from + o);
        keep(acc);
    }

    /**
     * Keeps the loads that produced {@code acc} alive. The JIT cannot prove the condition false, so
     * the loads stay; the field is written only in the rare case it holds, because a write on
     * every call (both cores, thousands of times per token) would bounce the field's cache line
     * between the cores.
     */
    static void keep(int acc) {
        if (acc == 0x7EADBEEF) sink = acc;
    }
}
