package io.modelopt.quantization.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.WeightMatrix;
import java.lang.foreign.Arena;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A packed integer matrix through core's {@link MatMul}, scalar and vector kernels (the decoded-row
 * fallback, and the GEMM over decoded rows from 16 tokens), against the float64 dot product of its
 * reference-decoded rows, with row counts and token counts that leave the kernels' loops remainders.
 */
class PackedIntMatMulTest {
    /** Error allowed as a fraction of {@code Σ|w·x|}: float accumulation only (F32 activations), as core's MatMulTest. */
    static final double ACCUMULATION_TOLERANCE = 2e-6;

    static ComputePool pool1, pool2;

    @BeforeAll
    static void pools() {
        pool1 = new ComputePool(1);
        pool2 = new ComputePool(2);
    }

    @AfterAll
    static void close() {
        pool1.close();
        pool2.close();
    }

    @ParameterizedTest(name = "{0} {1}x{2}")
    @CsvSource({
            "INT4_G128_ASYM, 8, 256", "INT4_G128_SYM, 19, 384", "INT3_G32_SYM, 37, 384", "INT3_G64_ASYM, 5, 192",
            "INT2_G64_ASYM, 16, 512", "INT8_CHANNEL_SYM, 16, 172", "INT8_G32_ASYM, 9, 96", "INT8_CHANNEL_SYM_F32, 20, 256",
            "INT4_CHANNEL_ASYM, 33, 128"})
    void matchesTheFloat64ProductOfTheDecodedRows(String formatName, int rows, int cols) {
        IntScheme s = PackedIntLayout.schemes().stream().filter(x -> x.formatName().equals(formatName)).findFirst().orElseThrow();
        try (Arena arena = Arena.ofShared()) { // the pool's threads read the tensors
            var src = IntRowsForTests.randomLayout(s, rows, cols, rows * 1009L + cols);
            // realistic magnitudes (the random F16 scales of IntRowsForTests span the whole F16 range)
            Random rnd = new Random(cols);
            for (IntRow r : src.rows) for (int g = 0; g < r.scales.length; g++) r.scales[g] = Float.float16ToFloat(Float.floatToFloat16((float) (0.001 + 0.02 * rnd.nextDouble())));
            PackedIntTensors t = PackedIntTensors.allocate("blk.0.ffn_up.weight", s, rows, cols, arena);
            for (int r = 0; r < rows; r++) t.writeRow(r, src.rows[r]);
            WeightMatrix w = t.matrix();
            double[][] decoded = new double[rows][cols];
            float[] row = new float[cols];
            for (int r = 0; r < rows; r++) {
                w.dequantizeRow(r, row, 0);
                for (int k = 0; k < cols; k++) decoded[r][k] = row[k];
            }
            for (int nTokens : new int[] {1, 3, 17}) {
                float[] x = new float[nTokens * cols];
                for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * (1 + i % 3));
                for (KernelMode mode : new KernelMode[] {KernelMode.SCALAR, KernelMode.VECTOR}) {
                    if (mode == KernelMode.VECTOR) assumeTrue(KernelMode.vectorApiAvailable());
                    float[] out = new float[nTokens * rows];
                    MatMul.matmul(mode, nTokens % 2 == 0 ? pool1 : pool2, w, x, 0, cols, nTokens, out, 0, rows);
                    for (int tok = 0; tok < nTokens; tok++) {
                        for (int r = 0; r < rows; r++) {
                            double dot = 0, abs = 0;
                            for (int k = 0; k < cols; k++) {
                                double p = decoded[r][k] * x[tok * cols + k];
                                dot += p;
                                abs += Math.abs(p);
                            }
                            assertEquals(dot, out[tok * rows + r], ACCUMULATION_TOLERANCE * abs + 1e-30,
                                    formatName + " " + mode + " tokens " + nTokens + " token " + tok + " row " + r);
                        }
                    }
                }
            }
        }
    }
}
