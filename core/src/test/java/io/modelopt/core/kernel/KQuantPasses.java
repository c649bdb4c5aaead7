package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The check the repacked k-quant kernels' tests share: a one-token call over nine groups (two
 * four-group passes, then one group) gives the bits of nine one-group calls, since the pass has
 * the one-group kernel's integer sums and float steps.
 */
final class KQuantPasses {
    private KQuantPasses() {}

    /** A repacked k-quant layout as its tests reach it (the static methods of {@code InterleavedQ*_K}). */
    interface Layout {
        int groupRows();

        long packedBytes(int rows, int cols);

        void pack(WeightMatrix w, MemorySegment dst, int g0, int g1);

        /** One token's multipliers of {@code a}'s quants (Q4_K's unless the layout has its own). */
        default int[] multipliers(Activations a, int cols) {
            int[] y = new int[cols / 2];
            InterleavedQ4_K.multipliers(a.q, 0, cols, y, 0);
            return y;
        }

        /** Groups {@code [g0, g1)} for the tokens of {@code a}, {@code y} its {@link #multipliers}. */
        void compute(MemorySegment m, int nb, Activations a, int[] y, int g0, int g1, float[] out, int outOff, int outStride);
    }

    static void assertPassGivesTheBitsOfOneGroupCalls(Arena arena, GgmlType type, Layout layout) {
        int rows = 9 * layout.groupRows(), cols = 1024, nb = cols / 256, groups = rows / layout.groupRows();
        WeightMatrix w = MatMulTest.matrix(type, rows, cols, 77);
        MemorySegment packed = arena.allocate(layout.packedBytes(rows, cols), 64);
        layout.pack(w, packed, 0, groups);
        float[] x = MatMulTest.activations(cols, 78);
        Activations a = new Activations();
        a.prepare(Activations.Kind.Q8_K, x, 0, cols, 1, cols, false);
        a.quantize(0, 1);
        int[] y = layout.multipliers(a, cols);
        float[] passes = new float[rows], single = new float[rows];
        layout.compute(packed, nb, a, y, 0, groups, passes, 0, rows); // two passes of four, then one group
        for (int g = 0; g < groups; g++) layout.compute(packed, nb, a, y, g, g + 1, single, 0, rows);
        for (int r = 0; r < rows; r++) assertEquals(Float.floatToRawIntBits(single[r]), Float.floatToRawIntBits(passes[r]), type + " row " + r);
    }
}
