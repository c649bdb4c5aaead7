package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The width the kernels run at: the one the build's execution asked for, and a shape the kernels are written for. */
class VectorWidthTest {
    @Test
    void runsAtTheWidthTheExecutionAskedFor() {
        String expected = System.getProperty("modelopt.test.expectBits");
        int bits = VectorWidth.bits();
        assertTrue(bits == 0 || bits == 128 || bits == 256 || bits == 512, "width " + bits);
        if (expected != null) assertEquals(Integer.parseInt(expected), bits, "this test execution's JVM flags select the width");
        if (bits > 0) {
            assertEquals(KernelMode.VECTOR, KernelMode.DEFAULT);
            assertEquals(bits / 32, Simd.L);
            assertEquals(bits, Simd.F.vectorBitSize());
            assertEquals(Simd.L, Simd.I.length());
            assertEquals(Simd.L, Simd.SL.length());
            assertEquals(Simd.BL.length(), Simd.L * Simd.BL_PARTS);
        }
    }
}
