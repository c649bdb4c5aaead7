package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/**
 * {@link InterleavedQ8_0#decodeGroup} and {@link InterleavedQ8_0#scales} on their own (not through
 * the GEMM): every group of the copy decodes to the reference decoder's floats in the two 8-row
 * slices, at every vector width this class runs at (one, two or four vectors per 16-row column;
 * at 128 bits each 8-row half is two parts of one 8-byte load), for even and odd block counts
 * (an odd last block's scales are the high halves of a line shared with no other block).
 */
class InterleavedQ8_0DecodeTest {
    @Test
    void groupsDecodeToTheReferenceFloats() {
        assumeTrue(KernelMode.vectorApiAvailable(), "the repacked kernel is Vector API only");
        for (int[] shape : new int[][]{{16, 32}, {32, 64}, {48, 96}, {16, 160}, {32, 480}}) {
            int rows = shape[0], cols = shape[1], nb = cols / 32;
            try (Arena arena = Arena.ofConfined()) {
                WeightMatrix plain = MatMulTest.matrix(GgmlType.Q8_0, rows, cols, 31L * rows + cols);
                WeightMatrix w = plain.repacked(arena);
                assertEquals(true, w.isRepacked(), rows + "x" + cols);
                float[] ref = new float[cols];
                float[] panel = new float[16 * cols];
                float[] scales = new float[16 * nb];
                for (int g = 0; g < rows / 16; g++) {
                    java.util.Arrays.fill(panel, Float.NaN);
                    InterleavedQ8_0.decodeGroup(w.packed(), g, nb, panel, scales);
                    for (int r = 0; r < 16; r++) {
                        plain.dequantizeRow(16 * g + r, ref, 0);
                        for (int k = 0; k < cols; k++) {
                            float got = panel[(r / 8) * 8 * cols + 8 * k + r % 8];
                            assertEquals(Float.floatToRawIntBits(ref[k]), Float.floatToRawIntBits(got),
                                    rows + "x" + cols + " group " + g + " row " + r + " col " + k + ": " + ref[k] + " vs " + got);
                        }
                        for (int b = 0; b < nb; b++) {
                            float d = WeightData.half(plain.data(), (16L * g + r) * plain.rowBytes() + (long) b * Q8_0Kernel.BLOCK_BYTES);
                            // the decoded code (d · 2^-102) times 2^102: the file's scale exactly
                            assertEquals(Float.floatToRawIntBits(d), Float.floatToRawIntBits(scales[16 * b + r]), "scale of block " + b + " row " + r);
                        }
                    }
                }
            }
        }
    }
}
