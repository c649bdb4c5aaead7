package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.tensor.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The K-quant vector kernels ({@link Q4_KKernel}, {@link Q5_KKernel}, {@link Q6_KKernel}) at the
 * process's width, on their own (the per-token paths: below the GEMM's token count): the one-
 * and four-token dot products against the float64 reference of {@link MatMulTest}, and the row
 * decoders against the reference decoder, with row and super-block counts that leave every
 * width's loops a remainder (1..9 tokens, odd super-block counts).
 */
class KQuantKernelsTest {
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

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q5_K", "Q6_K"})
    void dotProductsMatchFloat64Reference(GgmlType t) {
        assumeTrue(KernelMode.vectorApiAvailable());
        long seed = 300;
        for (int cols : new int[]{256, 768, 1280}) {
            for (int rows : new int[]{1, 6, 17}) {
                for (int nTokens : new int[]{1, 3, 4, 9}) {
                    seed++;
                    WeightMatrix w = MatMulTest.matrix(t, rows, cols, seed);
                    float[] x = MatMulTest.activations(nTokens * cols, seed * 7);
                    float[] out = new float[nTokens * rows], scalar = new float[nTokens * rows];
                    MatMul.matmul(KernelMode.VECTOR, seed % 2 == 0 ? pool1 : pool2, w, x, 0, cols, nTokens, out, 0, rows);
                    MatMul.matmul(KernelMode.SCALAR, pool1, w, x, 0, cols, nTokens, scalar, 0, rows);
                    double[][] ref = MatMulTest.reference(w, x, 0, cols, nTokens);
                    for (int i = 0; i < out.length; i++) {
                        String where = t + " " + rows + "x" + cols + " tokens " + nTokens + " out[" + i + "]";
                        assertEquals(ref[0][i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where);
                        assertEquals(scalar[i], out[i], MatMulTest.ACCUMULATION_TOLERANCE * ref[1][i] + 1e-30, where + " vs scalar");
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q6_K"})
    void rowDecodersEqualTheReference(GgmlType t) {
        assumeTrue(KernelMode.vectorApiAvailable());
        for (int cols : new int[]{256, 768}) {
            WeightMatrix w = MatMulTest.matrix(t, 11, cols, cols + 5);
            float[] v = new float[9 * cols], ref = new float[9 * cols];
            WeightFormats.forFileType(t).orElseThrow().kernel(KernelMode.VECTOR).dequantizeRows(w, 2, 9, v);
            for (int i = 0; i < 9; i++) w.dequantizeRow(2 + i, ref, i * cols);
            assertArrayEquals(ref, v, t + " " + cols);
        }
    }
}
