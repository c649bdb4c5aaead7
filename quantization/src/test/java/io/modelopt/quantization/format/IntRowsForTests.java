package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/** Random logical rows, every scheme, and a layout that serves rows held in memory (no stored packing involved). */
final class IntRowsForTests {
    private IntRowsForTests() {}

    /** Every scheme our formats take: bits × group × sym/asym with F16 scales, and F32 scales per channel. */
    static Stream<IntScheme> schemes() {
        List<IntScheme> all = new ArrayList<>();
        for (int bits : new int[] {2, 3, 4, 8}) {
            for (int g : new int[] {32, 64, 128, IntScheme.PER_CHANNEL}) {
                all.add(IntScheme.of(bits, g, true));
                all.add(IntScheme.of(bits, g, false));
            }
            all.add(new IntScheme(bits, IntScheme.PER_CHANNEL, true, IntScheme.ScaleType.F32));
        }
        return all.stream();
    }

    /** A random finite F16 value of either sign, subnormals included. */
    static float randomHalf(Random rnd) {
        while (true) {
            short h = (short) rnd.nextInt(1 << 16);
            if ((h & 0x7C00) != 0x7C00) return Float.float16ToFloat(h);
        }
    }

    /** A random finite float of either sign over a wide range of magnitudes. */
    static float randomFloat(Random rnd) {
        return (float) ((rnd.nextDouble() * 2 - 1) * Math.pow(2, rnd.nextInt(40) - 30));
    }

    static IntRow randomRow(IntScheme s, int cols, Random rnd) {
        IntRow r = new IntRow(s, cols);
        for (int k = 0; k < cols; k++) r.codes[k] = rnd.nextInt(s.maxCode() + 1);
        for (int g = 0; g < r.scales.length; g++) {
            r.scales[g] = s.scaleType() == IntScheme.ScaleType.F16 ? randomHalf(rnd) : randomFloat(rnd);
            r.zeros[g] = s.symmetric() ? s.symmetricZero() : rnd.nextInt(s.maxCode() + 1);
        }
        return r;
    }

    static void copy(IntRow src, IntRow dst) {
        System.arraycopy(src.codes, 0, dst.codes, 0, src.codes.length);
        System.arraycopy(src.scales, 0, dst.scales, 0, src.scales.length);
        System.arraycopy(src.zeros, 0, dst.zeros, 0, src.zeros.length);
    }

    /** A layout whose rows are held here; the matrix's main tensor is a placeholder of one byte per weight. */
    static final class ArrayLayout implements IntLayout {
        private final IntScheme scheme;
        final IntRow[] rows;

        ArrayLayout(IntScheme scheme, IntRow[] rows) {
            this.scheme = scheme;
            this.rows = rows;
        }

        @Override public IntScheme scheme() { return scheme; }

        @Override public void readRow(WeightMatrix w, int row, IntRow dst) { copy(rows[row], dst); }

        /** A matrix of these rows in a format of this layout. */
        WeightMatrix matrix(Arena arena, String name) {
            WeightFormat f = IntFormats.create(name, this, 1, 1);
            int cols = rows[0].codes.length;
            TensorData main = new TensorData(name, GgmlType.I8, new long[] {cols, rows.length}, arena.allocate((long) cols * rows.length));
            return WeightMatrix.of(f, rows.length, cols, main);
        }
    }

    static ArrayLayout randomLayout(IntScheme s, int rows, int cols, long seed) {
        Random rnd = new Random(seed);
        IntRow[] r = new IntRow[rows];
        for (int i = 0; i < rows; i++) r[i] = randomRow(s, cols, rnd);
        return new ArrayLayout(s, r);
    }
}
