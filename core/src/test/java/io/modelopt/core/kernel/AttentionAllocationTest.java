package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Decode attention over a cache read in place allocates nothing once compiled (it runs for every head of every token). */
class AttentionAllocationTest {
    @Tag("allocation") // run in a JVM of its own (see the parent pom)
    @Test
    void steadyStateDecodeAttentionDoesNotAllocate() throws ReflectiveOperationException {
        assumeTrue(KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        int headDim = 64, heads = 4, kvHeads = 2, n = 2 * AttentionKernel.ROW_CHUNK + 40;
        var f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        long entryBytes = 2L * headDim, headStride = n * entryBytes;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment keys = arena.allocate(kvHeads * headStride), values = arena.allocate(kvHeads * headStride);
            for (long i = 0; i < kvHeads * headStride / 2; i++) {
                keys.set(f16, 2 * i, Float.floatToFloat16((float) Math.sin(i * 0.37)));
                values.set(f16, 2 * i, Float.floatToFloat16((float) Math.cos(i * 0.11)));
            }
            long[] offs = new long[n];
            for (int p = 0; p < n; p++) offs[p] = (p < n / 2 ? p : n + n / 2 - 1 - p) * entryBytes; // one run, then one reversed
            float[] q = ElementwiseKernelsTest.data(heads * headDim, 1.0, 0.3);
            float[] scores = new float[heads * n], rows = new float[AttentionKernel.rowScratch(headDim)], out = new float[heads * headDim];
            long allocated = Long.MAX_VALUE;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (allocated >= 1024 && System.nanoTime() < deadline) {
                long before = (Long) allocatedBytes.invoke(bean);
                for (int i = 0; i < 50; i++) {
                    AttentionKernel.attend(KernelMode.VECTOR, q, 0, heads, headDim, 0.125f, keys, values, GgmlType.F16, offs,
                            headStride, n, scores, n, rows, out, 0);
                }
                allocated = (Long) allocatedBytes.invoke(bean) - before;
            }
            assertTrue(allocated < 1024, allocated + " bytes allocated by 50 calls");
        }
    }
}
