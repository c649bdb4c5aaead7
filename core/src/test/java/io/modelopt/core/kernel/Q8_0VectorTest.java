package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.Q8_0;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Q8_0Vector} against the scalar {@link Q8_0#quantizeActivations}: the same bits, special values included. */
class Q8_0VectorTest {
    @BeforeEach
    void vectorApi() {
        assumeTrue(KernelMode.DEFAULT == KernelMode.VECTOR, "vector kernels not in use on this CPU/JVM");
    }

    private static void assertSameAsScalar(float[] x, int off, int n) {
        int blocks = n / 32;
        float[] q1 = new float[n + 3], d1 = new float[blocks + 2], q2 = new float[n + 3], d2 = new float[blocks + 2];
        java.util.Arrays.fill(q1, 99f);
        java.util.Arrays.fill(q2, 99f);
        Q8_0.quantizeActivations(x, off, n, q1, 3, d1, 2);
        Q8_0Vector.quantizeActivations(x, off, n, q2, 3, d2, 2);
        for (int i = 0; i < q1.length; i++) {
            assertEquals(Float.floatToRawIntBits(q1[i]), Float.floatToRawIntBits(q2[i]), "quant " + i + ": " + q1[i] + " vs " + q2[i]);
        }
        for (int b = 0; b < d1.length; b++) {
            assertEquals(Float.floatToRawIntBits(d1[b]), Float.floatToRawIntBits(d2[b]), "scale " + b);
        }
    }

    @Test
    void randomBlocksOfEveryScale() {
        Random rnd = new Random(7);
        for (int trial = 0; trial < 50; trial++) {
            float[] x = new float[5 + 32 * 64];
            double scale = Math.pow(10, rnd.nextInt(13) - 8);   // 1e-8 .. 1e4
            for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * scale);
            assertSameAsScalar(x, 5, 32 * 64);
        }
    }

    @Test
    void tiesZerosAndSigns() {
        // amax 127 makes id = 1, so the quants are the values themselves: every .5 is a tie
        float[] x = new float[32 * 4];
        for (int i = 0; i < 32; i++) x[i] = i % 2 == 0 ? -(i + 0.5f) : i + 0.5f;
        x[0] = 127f;
        x[33] = -0.0f;                   // block 1: all zeros but a negative zero
        for (int i = 64; i < 96; i++) x[i] = -0.25f + 0.01f * (i - 64);   // small negatives round to +0
        x[64] = 127f;
        for (int i = 96; i < 128; i++) x[i] = i - 96 - 16.5f;
        x[100] = -127f;
        assertSameAsScalar(x, 0, x.length);
    }

    @Test
    void nonFiniteBlocksGiveNaNScaleAndZeroQuants() {
        float[] x = new float[32 * 4];
        for (int i = 0; i < x.length; i++) x[i] = (float) Math.sin(i);
        x[3] = Float.NaN;
        x[40] = Float.POSITIVE_INFINITY;
        x[95] = Float.NEGATIVE_INFINITY;
        assertSameAsScalar(x, 0, x.length);
        float[] q = new float[x.length], d = new float[4];
        Q8_0Vector.quantizeActivations(x, 0, x.length, q, 0, d, 0);
        assertEquals(Float.NaN, d[0]);
        assertEquals(Float.NaN, d[1]);
        assertEquals(Float.NaN, d[2]);
        assertTrue(Float.isFinite(d[3]));
        assertArrayEquals(new float[32], java.util.Arrays.copyOfRange(q, 0, 32));
    }

    @Test
    void lengthNotAWholeNumberOfBlocksIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Q8_0Vector.quantizeActivations(new float[40], 0, 40, new float[40], 0, new float[2], 0));
    }
}
