package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The prefill attention ({@link AttentionKernel#attendTransposed}) at head sizes and lengths that
 * end on every kind of vector tail at 512, 256 and 128 bits (head sizes below one vector, odd
 * vector counts, a scalar column tail; lengths below one vector and a masked last vector): the
 * vector path gives exactly the scalar path's bits (both are the same FMA chains), so it gives
 * the same bits at every width.
 */
class AttentionTransposedWidthTest {
    @Test
    void vectorEqualsScalarAtEveryHeadSizeAndLength() {
        assumeTrue(KernelMode.DEFAULT == KernelMode.VECTOR, "vector kernels not in use on this CPU/JVM");
        long seed = 3;
        for (int headDim : new int[]{2, 4, 12, 17, 40, 64, 96}) {
            for (int n : new int[]{1, 3, 5, 8, 13, 16, 33, 70}) {
                for (boolean f16 : new boolean[]{false, true}) {
                    Random rnd = new Random(seed++);
                    int kvDim = 2 * headDim, head = 1, rows = n + 2;
                    float[] q = new float[headDim + 3], kT = new float[kvDim * rows], v = new float[rows * kvDim];
                    for (int i = 0; i < q.length; i++) q[i] = (float) rnd.nextGaussian();
                    for (int i = 0; i < kT.length; i++) kT[i] = (float) rnd.nextGaussian();
                    for (int i = 0; i < v.length; i++) v[i] = (float) rnd.nextGaussian();
                    float scale = (float) (1 / Math.sqrt(headDim));
                    float[][] outs = new float[2][headDim + 1];
                    for (KernelMode mode : KernelMode.values()) {
                        AttentionKernel.attendTransposed(mode, q, 3, headDim, scale, kT, head * headDim * rows, rows, v, head * headDim, kvDim,
                                n, f16, new float[n], outs[mode.ordinal()], 1);
                    }
                    for (int i = 0; i <= headDim; i++) {
                        assertEquals(Float.floatToRawIntBits(outs[0][i]), Float.floatToRawIntBits(outs[1][i]),
                                "headDim " + headDim + " n " + n + " f16 " + f16 + " element " + i + ": " + outs[0][i] + " vs " + outs[1][i]);
                    }
                }
            }
        }
    }
}
