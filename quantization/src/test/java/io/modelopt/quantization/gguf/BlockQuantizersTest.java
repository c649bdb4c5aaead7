package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** decode(quantize(x)) error bounds on random data for every type, with and without importance, and the input checks. */
class BlockQuantizersTest {

    static float[] gaussian(int n, long seed, double sigma) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * sigma);
        return x;
    }

    static float[] importance(int n, long seed) {
        Random r = new Random(seed);
        float[] w = new float[n];
        for (int i = 0; i < n; i++) w[i] = (float) (0.01 + r.nextDouble() * r.nextDouble() * 5);
        return w;
    }

    /**
     * Relative RMS error bounds, about 1.3x what this Gaussian data gives (measured: Q8_0 0.0054,
     * Q6_K 0.018, Q5_x 0.035-0.043, Q4_x 0.072-0.086, Q3_K 0.15, Q2_K 0.29-0.30).
     */
    @ParameterizedTest(name = "{0} imatrix={1}")
    @CsvSource({
            "Q8_0, false, 0.007", "Q8_0, true, 0.007",
            "Q6_K, false, 0.024", "Q6_K, true, 0.024",
            "Q5_0, false, 0.056", "Q5_0, true, 0.056",
            "Q5_1, false, 0.05", "Q5_1, true, 0.05",
            "Q5_K, false, 0.048", "Q5_K, true, 0.048",
            "Q4_0, false, 0.11", "Q4_0, true, 0.11",
            "Q4_1, false, 0.10", "Q4_1, true, 0.10",
            "Q4_K, false, 0.097", "Q4_K, true, 0.097",
            "Q3_K, false, 0.195", "Q3_K, true, 0.195",
            "Q2_K, false, 0.39", "Q2_K, true, 0.39",
            "IQ4_NL, false, 0.10", "IQ4_NL, true, 0.10",
    })
    void roundTripErrorIsBounded(GgmlType type, boolean withImportance, double bound) {
        int rows = 6, n = 768;
        float[] x = gaussian(rows * n, 11 + type.ordinal(), 0.03);
        float[] qw = withImportance ? importance(n, 5) : null;
        BlockQuantizer q = BlockQuantizer.of(type);
        assertEquals(type, q.type());
        byte[] y = new byte[(int) type.bytesFor((long) rows * n)];
        q.quantize(x, 0, rows, n, qw, y, 0);
        float[] back = Decode.decode(type, y, rows * n);
        double rel = Decode.relRms(x, back);
        System.out.printf("%s%s: relative rms error %.4f%n", type, withImportance ? "+imatrix" : "", rel);
        assertTrue(rel < bound, type + " relative rms error " + rel + " >= " + bound);
        // every value is reconstructed within a few quantization steps of the block's range
        for (int i = 0; i < x.length; i++) assertTrue(Math.abs(x[i] - back[i]) < 0.15, type + " element " + i + ": " + x[i] + " -> " + back[i]);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL"})
    void zerosStayZeroAndRowsAreIndependent(GgmlType type) {
        int n = 512;
        BlockQuantizer q = BlockQuantizer.of(type);
        float[] zeros = new float[n];
        for (float[] qw : new float[][] {null, importance(n, 1)}) {
            byte[] y = new byte[(int) type.bytesFor(n)];
            q.quantizeRow(zeros, 0, n, qw, y, 0);
            for (float v : Decode.decode(type, y, n)) assertEquals(0f, v, 0f);
        }
        // quantizing two rows at once equals quantizing each at its offsets
        float[] x = gaussian(2 * n + 7, 2, 0.05);
        float[] qw = importance(n, 3);
        int rowBytes = (int) type.bytesFor(n);
        byte[] both = new byte[2 * rowBytes + 5];
        q.quantize(x, 7, 2, n, qw, both, 5);
        byte[] one = new byte[rowBytes];
        q.quantizeRow(x, 7 + n, n, qw, one, 0);
        assertArrayEquals(one, java.util.Arrays.copyOfRange(both, 5 + rowBytes, 5 + 2 * rowBytes));
    }

    @Test
    void importanceChangesTheKQuantsButNotQ8_0() {
        int n = 256;
        float[] x = gaussian(n, 9, 0.05);
        float[] qw = importance(n, 10);
        for (GgmlType t : new GgmlType[] {GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.Q4_0, GgmlType.IQ4_NL}) {
            byte[] a = new byte[(int) t.bytesFor(n)], b = new byte[a.length];
            BlockQuantizer.of(t).quantizeRow(x, 0, n, null, a, 0);
            BlockQuantizer.of(t).quantizeRow(x, 0, n, qw, b, 0);
            assertNotEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(b), t + " ignores the importance matrix");
        }
        byte[] a = new byte[(int) GgmlType.Q8_0.bytesFor(n)], b = new byte[a.length];
        BlockQuantizer.of(GgmlType.Q8_0).quantizeRow(x, 0, n, null, a, 0);
        BlockQuantizer.of(GgmlType.Q8_0).quantizeRow(x, 0, n, qw, b, 0);
        assertArrayEquals(a, b);
    }

    @Test
    void wrongShapesAreRejectedWithClearMessages() {
        BlockQuantizer k = BlockQuantizer.of(GgmlType.Q4_K);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> k.quantizeRow(new float[300], 0, 300, null, new byte[1000], 0));
        assertTrue(e.getMessage().contains("Q4_K") && e.getMessage().contains("multiple of 256") && e.getMessage().contains("300"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BlockQuantizer.of(GgmlType.Q4_0).quantizeRow(new float[40], 0, 40, null, new byte[100], 0));
        assertTrue(e.getMessage().contains("multiple of 32"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.quantizeRow(new float[256], 0, 256, new float[128], new byte[144], 0));
        assertTrue(e.getMessage().contains("importance row has 128 values"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.quantize(new float[256], 0, 2, 256, null, new byte[288], 0));
        assertTrue(e.getMessage().contains("exceed the source array"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.quantize(new float[512], 0, 2, 256, null, new byte[200], 0));
        assertTrue(e.getMessage().contains("need 288 bytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BlockQuantizer.of(GgmlType.IQ2_XXS));
        assertTrue(e.getMessage().contains("no quantizer for ggml type IQ2_XXS"), e.getMessage());
    }
}
