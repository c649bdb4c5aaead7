package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The repacked Q8_0, Q4_0 and F16 kernels, one-token and prefill GEMM, warmed up together as a
 * model warms them up, then each compiled without boxed vectors.
 *
 * <p>Why it can fail: the JIT knows a vector's exact class while parsing a kernel only where it
 * comes from a load of a constant species or from an operation on such a vector; the results of
 * {@code broadcast}, {@code zero}, {@code convert}, {@code convertShape} and {@code reinterpret*}
 * are typed later, when their intrinsics are inlined. A method called on one of those dispatches
 * on the type profile of the Vector API's own bytecode, which every kernel of the process shares.
 * If vectors of two shapes pass there, the call compiles bimorphic, the two paths merge and the
 * merged vector is boxed. At 512 bits the Q8_0 panel decoder used 256-bit vectors, and whole-model
 * runs boxed in about half of them (11-77 MB per decoded token); this small warm-up did not
 * reproduce that order, so the check that matters is {@code bench}'s {@code decode alloc}
 * (docs/PERFORMANCE.md, "One vector shape per process"); this test keeps the kernels from
 * regressing on their own.
 */
class KernelWarmUpAllocationTest {
    @Tag("allocation") // run in a JVM of its own (see the parent pom)
    @Test
    void kernelsWarmedUpTogetherDoNotAllocate() throws ReflectiveOperationException {
        assumeTrue(KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        int rows = 128, cols = 512;
        int[] tokenCounts = {1, 64};
        try (Arena arena = Arena.ofShared(); ComputePool pool = new ComputePool(1)) {
            GgmlType[] types = {GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.F16};
            WeightMatrix[] weights = new WeightMatrix[types.length];
            for (int t = 0; t < types.length; t++) weights[t] = MatMulTest.matrix(types[t], rows, cols, 7).repacked(arena);
            float[][] xs = new float[tokenCounts.length][], outs = new float[tokenCounts.length][];
            for (int n = 0; n < tokenCounts.length; n++) {
                xs[n] = MatMulTest.activations(tokenCounts[n] * cols, 11);
                outs[n] = new float[tokenCounts[n] * rows];
            }
            // the prefill and decode kernels of every format take turns while they are profiled, as in a model
            for (int i = 0; i < 300; i++) {
                for (int t = 0; t < types.length; t++) {
                    for (int n = 0; n < tokenCounts.length; n++) MatMul.matmul(KernelMode.VECTOR, pool, weights[t], xs[n], 0, cols, tokenCounts[n], outs[n], 0, rows);
                }
            }
            java.util.List<String> boxed = new java.util.ArrayList<>();
            for (int t = 0; t < types.length; t++) {
                GgmlType type = types[t];
                WeightMatrix w = weights[t];
                for (int n = 0; n < tokenCounts.length; n++) {
                    int tokens = tokenCounts[n];
                    float[] x = xs[n], out = outs[n];
                    long allocated = Long.MAX_VALUE;
                    long deadline = System.nanoTime() + 15_000_000_000L;
                    while (allocated >= 1024 && System.nanoTime() < deadline) {
                        long before = (Long) allocatedBytes.invoke(bean);
                        for (int i = 0; i < 20; i++) MatMul.matmul(KernelMode.VECTOR, pool, w, x, 0, cols, tokens, out, 0, rows);
                        allocated = (Long) allocatedBytes.invoke(bean) - before;
                    }
                    if (allocated >= 1024) boxed.add(type + " x " + tokens + " token(s): " + allocated + " bytes by 20 calls");
                }
            }
            assertTrue(boxed.isEmpty(), "boxed vectors: " + boxed);
        }
    }
}
