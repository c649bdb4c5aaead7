package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link AttentionKernel#attendTransposed4} against four {@link AttentionKernel#attendTransposed}
 * calls: the same bits for every query, whatever the four lengths (each a different causal
 * position, as in a prefill), with F32 and F16-rounded weights.
 */
class AttentionFourTest {
    private static void compare(int headDim, int rows, int[] ns, boolean f16, long seed) {
        Random rnd = new Random(seed);
        int kvDim = 3 * headDim, head = 1;                 // the second of three KV heads
        float[] q = new float[4 * headDim + 5];
        float[] keysT = new float[kvDim * rows], values = new float[rows * kvDim];
        for (int i = 0; i < q.length; i++) q[i] = (float) rnd.nextGaussian();
        for (int i = 0; i < keysT.length; i++) keysT[i] = (float) rnd.nextGaussian();
        for (int i = 0; i < values.length; i++) values[i] = (float) rnd.nextGaussian();
        int kBase = head * headDim * rows, vBase = head * headDim;
        int[] qOffs = {5, 5 + headDim, 5 + 2 * headDim, 5 + 3 * headDim};
        float scale = (float) (1 / Math.sqrt(headDim));

        float[] expected = new float[q.length];
        float[] scores = new float[rows];
        for (int i = 0; i < 4; i++) {
            AttentionKernel.attendTransposed(KernelMode.VECTOR, q, qOffs[i], headDim, scale, keysT, kBase, rows,
                    values, vBase, kvDim, ns[i], f16, scores, expected, qOffs[i]);
        }
        float[] actual = new float[q.length];
        int stride = rows + 3;
        AttentionKernel.attendTransposed4(q, qOffs, headDim, scale, keysT, kBase, rows, values, vBase, kvDim,
                ns, f16, new float[4 * stride], stride, actual, qOffs);
        for (int i = 0; i < q.length; i++) {
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]),
                    "headDim " + headDim + " rows " + rows + " element " + i + ": " + expected[i] + " vs " + actual[i]);
        }
    }

    @Test
    void fourQueriesEqualFourSingleCalls() {
        assumeTrue(AttentionKernel.canAttendFour(KernelMode.DEFAULT, 64), "vector kernels not in use on this CPU/JVM");
        long seed = 1;
        for (int headDim : new int[]{32, 64, 96, 128}) {
            for (boolean f16 : new boolean[]{false, true}) {
                compare(headDim, 1, new int[]{1, 1, 1, 1}, f16, seed++);
                compare(headDim, 37, new int[]{37, 37, 37, 37}, f16, seed++);         // four heads, one position
                compare(headDim, 37, new int[]{34, 35, 36, 37}, f16, seed++);         // four positions, one head
                compare(headDim, 130, new int[]{17, 1, 130, 64}, f16, seed++);
            }
        }
    }

    @Test
    void onlyWholeVectorPairsOfHeadSize() {
        assumeTrue(AttentionKernel.canAttendFour(KernelMode.DEFAULT, 64), "vector kernels not in use on this CPU/JVM");
        assertFalse(AttentionKernel.canAttendFour(KernelMode.VECTOR, 8));
        assertFalse(AttentionKernel.canAttendFour(KernelMode.VECTOR, 48));
        assertFalse(AttentionKernel.canAttendFour(KernelMode.SCALAR, 64));
    }

    @Test
    void scoreScratchTooSmallIsRejected() {
        assumeTrue(AttentionKernel.canAttendFour(KernelMode.DEFAULT, 32), "vector kernels not in use on this CPU/JVM");
        float[] q = new float[128], k = new float[32 * 10], v = new float[10 * 32], out = new float[128];
        int[] offs = {0, 32, 64, 96};
        assertThrows(IllegalArgumentException.class, () -> AttentionKernel.attendTransposed4(q, offs, 32, 1f, k, 0, 10, v, 0, 32,
                new int[]{10, 10, 10, 10}, false, new float[4 * 9], 9, out, offs));
    }
}
