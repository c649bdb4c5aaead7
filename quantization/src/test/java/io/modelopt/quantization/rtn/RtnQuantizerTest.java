package io.modelopt.quantization.rtn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntLayout;
import io.modelopt.quantization.format.PackedIntTensors;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** RTN against a float64 implementation of AutoGPTQ's find_params rule written here, the clip search, and bad input. */
class RtnQuantizerTest {

    static Stream<IntScheme> schemes() {
        List<IntScheme> all = new ArrayList<>(PackedIntLayout.schemes());
        all.add(new IntScheme(4, 64, false, IntScheme.ScaleType.F32)); // not stored by our layout, but RTN takes any scheme
        return all.stream();
    }

    /** Gaussian weights with a few outliers and, in some groups, only positive or only negative values. */
    static float[] weights(int n, long seed) {
        Random r = new Random(seed);
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            double x = r.nextGaussian() * 0.02;
            if (r.nextInt(97) == 0) x *= 8;
            w[i] = (float) x;
        }
        for (int i = 0; i < Math.min(32, n); i++) w[i] = Math.abs(w[i]);        // a group of non-negative weights
        for (int i = 32; i < Math.min(64, n); i++) w[i] = -Math.abs(w[i]);      // and one of non-positive ones
        return w;
    }

    /** The rule, in double, from the definitions (AutoGPTQ find_params, with the scale rounded to its stored type first). */
    record Ref(double scale, int zero, int[] codes) {
        static Ref of(float[] w, int o, int n, IntScheme s) {
            double lo = 0, hi = 0;
            for (int k = 0; k < n; k++) {
                lo = Math.min(lo, w[o + k]);
                hi = Math.max(hi, w[o + k]);
            }
            double maxq = Math.pow(2, s.bits()) - 1;
            // as torch's float32: the range rounded to float, then the quotient (one rounding each)
            float range = s.symmetric() ? (float) (2 * Math.max(-lo, hi)) : (float) (hi - lo);
            float scale = (float) (range / maxq);
            if (s.scaleType() == IntScheme.ScaleType.F16) scale = Float.float16ToFloat(Float.floatToFloat16(scale));
            int zero = s.symmetric() || scale == 0 ? 1 << (s.bits() - 1) : (int) Math.max(0, Math.min(maxq, Math.rint(-lo / scale)));
            int[] codes = new int[n];
            for (int k = 0; k < n; k++) {
                codes[k] = scale == 0 ? zero : (int) Math.max(0, Math.min(maxq, Math.rint(w[o + k] / (double) scale) + zero));
            }
            return new Ref(scale, zero, codes);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemes")
    void matchesAFloat64ImplementationOfTheRule(IntScheme s) {
        for (int cols : new int[] {128, 512}) {
            int rows = 3;
            float[] w = weights(rows * cols, cols + s.hashCode());
            IntRow q = new IntRow(s, cols);
            int gs = s.groupSize(cols);
            for (int r = 0; r < rows; r++) {
                RtnQuantizer.quantizeRow(w, r * cols, cols, s, false, q);
                for (int g = 0; g < cols / gs; g++) {
                    Ref ref = Ref.of(w, r * cols + g * gs, gs, s);
                    assertEquals(ref.scale(), q.scales[g], s + " scale of group " + g);
                    assertEquals(ref.zero(), q.zeros[g], s + " zero of group " + g);
                    for (int k = 0; k < gs; k++) {
                        int c = g * gs + k;
                        assertEquals(ref.codes()[k], q.codes[c], s + " code " + c);
                        double value = ref.scale() * (ref.codes()[k] - ref.zero());
                        assertEquals(value, q.value(c), Math.ulp((float) value), "decoded value");
                        // round to nearest: within half a step, and where the top code clips within half a step more
                        // (plus what the F16 rounding of the scale takes off the top of the range: maxq · 2^-11 steps)
                        double x = w[r * cols + c];
                        double bound = (1 + (s.maxCode() + 1) / 2048.0) * ref.scale() + 1e-12;
                        assertTrue(Math.abs(q.value(c) - x) <= bound,
                                () -> s + ": " + x + " decoded as " + q.value(c));
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemes")
    void clipSearchNeverIncreasesAGroupsError(IntScheme s) {
        int cols = 512;
        float[] w = weights(2 * cols, 99 + s.hashCode());
        IntRow plain = new IntRow(s, cols), clipped = new IntRow(s, cols);
        int gs = s.groupSize(cols), improved = 0;
        for (int r = 0; r < 2; r++) {
            RtnQuantizer.quantizeRow(w, r * cols, cols, s, false, plain);
            RtnQuantizer.quantizeRow(w, r * cols, cols, s, true, clipped);
            for (int g = 0; g < cols / gs; g++) {
                double e0 = 0, e1 = 0;
                for (int k = g * gs; k < (g + 1) * gs; k++) {
                    double x = w[r * cols + k];
                    e0 += (plain.value(k) - x) * (plain.value(k) - x);
                    e1 += (clipped.value(k) - x) * (clipped.value(k) - x);
                }
                assertTrue(e1 <= e0, s + " row " + r + " group " + g + ": clip search error " + e1 + " > plain " + e0);
                if (e1 < e0) improved++;
            }
        }
        // outliers make a shrunk range pay at 2-4 bits; at 8 bits the steps are too fine to matter for every group
        if (s.bits() <= 4) assertTrue(improved > 0, s + ": the search improved no group");
    }

    @Test
    void aGroupOfZerosDecodesToZero() {
        for (IntScheme s : PackedIntLayout.schemes()) {
            float[] w = new float[128];
            IntRow q = new IntRow(s, 128);
            RtnQuantizer.quantizeRow(w, 0, 128, s, true, q);
            for (int k = 0; k < 128; k++) assertEquals(0f, q.value(k), s.toString());
            assertEquals(0f, q.scales[0]);
            assertEquals(q.zeros[0], q.codes[0]);
        }
    }

    @Test
    void tinyGroupsWhoseScaleUnderflowsF16DecodeToZero() {
        IntScheme s = IntScheme.of(4, 32, false);
        float[] w = new float[32];
        for (int k = 0; k < 32; k++) w[k] = (k % 3 - 1) * 1e-10f;
        IntRow q = new IntRow(s, 32);
        RtnQuantizer.quantizeRow(w, 0, 32, s, false, q);
        assertEquals(0f, q.scales[0]);
        for (int k = 0; k < 32; k++) assertEquals(0f, q.value(k));
    }

    @Test
    void aConstantGroupIsKept() {
        IntScheme asym = IntScheme.of(4, 32, false), sym = IntScheme.of(4, 32, true);
        float[] w = new float[32];
        java.util.Arrays.fill(w, 0.3f);
        IntRow q = new IntRow(asym, 32);
        RtnQuantizer.quantizeRow(w, 0, 32, asym, false, q);
        // asymmetric: range [0, 0.3], zero 0, every code 15: 0.3 up to the F16 rounding of the scale
        assertEquals(0, q.zeros[0]);
        for (int k = 0; k < 32; k++) assertEquals(0.3, q.value(k), 0.3 / 1024);
        q = new IntRow(sym, 32);
        RtnQuantizer.quantizeRow(w, 0, 32, sym, false, q);
        // symmetric (AutoGPTQ's rule): scale 0.6/15, 0.3/scale = 7.5 rounds to 8, clipped to code 15 = +7 steps
        for (int k = 0; k < 32; k++) assertEquals(0.28, q.value(k), 0.3 / 1024);
    }

    @Test
    void badWeightsNameWhereTheyAre() {
        IntScheme s = IntScheme.of(4, 32, true);
        float[] w = weights(128, 1);
        w[64 + 40] = Float.NaN;
        IntRow q = new IntRow(s, 64);
        var e = assertThrows(IllegalArgumentException.class, () -> RtnQuantizer.quantizeRow(w, 64, 64, s, false, q));
        assertTrue(e.getMessage().contains("column 40 of the row at offset 64"), e.getMessage());
        try (Arena arena = Arena.ofConfined()) {
            e = assertThrows(IllegalArgumentException.class, () -> RtnQuantizer.quantize("blk.1.ffn_up.weight", w, 2, 64, s, false, arena));
            assertTrue(e.getMessage().contains("tensor blk.1.ffn_up.weight row 1") && e.getMessage().contains("NaN"), e.getMessage());
        }
        w[104] = Float.POSITIVE_INFINITY;
        assertThrows(IllegalArgumentException.class, () -> RtnQuantizer.quantizeRow(w, 64, 64, s, false, q));
        float[] huge = new float[32];
        huge[3] = 1e9f;
        assertThrows(IllegalArgumentException.class, () -> RtnQuantizer.quantizeRow(huge, 0, 32, IntScheme.of(4, 32, true), false, new IntRow(IntScheme.of(4, 32, true), 32)),
                "a scale beyond F16");
        assertThrows(IllegalArgumentException.class, () -> RtnQuantizer.quantizeRow(new float[64], 0, 64, s, false, new IntRow(IntScheme.of(4, 64, true), 64)));
    }

    @Test
    void aQuantizedTensorDecodesAsItsRows() {
        IntScheme s = IntScheme.of(3, 128, false);
        float[] w = weights(4 * 256, 3);
        try (Arena arena = Arena.ofConfined()) {
            PackedIntTensors t = RtnQuantizer.quantize("blk.0.ffn_gate.weight", w, 4, 256, s, false, arena);
            WeightMatrix m = t.matrix();
            IntRow q = new IntRow(s, 256);
            float[] dec = new float[256];
            for (int r = 0; r < 4; r++) {
                RtnQuantizer.quantizeRow(w, r * 256, 256, s, false, q);
                m.dequantizeRow(r, dec, 0);
                for (int k = 0; k < 256; k++) assertEquals(q.value(k), dec[k]);
            }
        }
    }
}
