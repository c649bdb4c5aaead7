package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.quant.RefDecode;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * The width-dependent pieces of the repacked Q4_0 kernels, checked directly at whichever width
 * this JVM runs ({@link Simd}): a 64-byte line is 1, 2 or 4 int vectors, so the prefill panels
 * ({@link InterleavedQ4_0#decodeGroup}: masked stores at 512 bits, plain ones narrower), the
 * scales and the one-token pass's rows ({@link InterleavedQ4_0#DECODE_GROUPS}) are laid out per
 * vector part.
 */
class InterleavedQ4_0WidthTest {

    @Test
    void aOneTokenPassHoldsEightVectorsOfRows() {
        assumeTrue(KernelMode.vectorApiAvailable());
        assertEquals(8 * Simd.L, InterleavedQ4_0.DECODE_GROUPS * InterleavedQ4_0.ROWS);
    }

    /**
     * Every row and column of two decoded groups is the reference decoder's float at its panel slot
     * (which also checks the scales as floats, {@link InterleavedQ4_0#scales}, that the decoder multiplies).
     */
    @Test
    void decodedGroupsAreTheReferenceRows() {
        assumeTrue(KernelMode.vectorApiAvailable());
        try (Arena arena = Arena.ofShared()) {
            for (int cols : new int[]{32, 96, 160}) {
                int rows = 2 * InterleavedQ4_0.ROWS + 7, nb = cols / 32;
                WeightMatrix w = MatMulTest.matrix(GgmlType.Q4_0, rows, cols, 9100 + cols).repacked(arena);
                assertTrue(w.isRepacked());
                float[] panel = new float[InterleavedQ4_0.ROWS * cols], scales = new float[InterleavedQ4_0.ROWS * nb];
                for (int g = 0; g < 2; g++) {
                    InterleavedQ4_0.decodeGroup(w.packed(), g, nb, panel, scales);
                    for (int r = 0; r < InterleavedQ4_0.ROWS; r++) {
                        long row = (long) (g * InterleavedQ4_0.ROWS + r) * w.rowBytes();
                        double[] ref = RefDecode.decode(GgmlType.Q4_0, w.tensor().data(), row, cols);
                        for (int k = 0; k < cols; k++) {
                            assertEquals((float) ref[k], panel[(r / 8) * 8 * cols + 8 * k + r % 8], 0f,
                                    "cols " + cols + " group " + g + " row " + r + " col " + k);
                        }
                    }
                }
            }
        }
    }
}
