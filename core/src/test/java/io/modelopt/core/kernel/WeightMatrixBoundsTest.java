package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The launcher turns the Vector API's per-load index checks off, so a weight's copy must be
 * checked when it is bound: a copy or affine terms smaller than the layout needs are refused,
 * naming the tensor and both sizes.
 */
class WeightMatrixBoundsTest {
    static final int ROWS = 64, COLS = 64;

    @Test void aCopyShorterThanItsLayoutIsRefusedAtBind() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate((long) ROWS * (COLS / 32) * 18); // Q4_0: 18 bytes per 32 weights, zero scales
            WeightMatrix w = WeightMatrix.of(new TensorData("blk.0.attn_q.weight", GgmlType.Q4_0, new long[] {COLS, ROWS}, data));
            WeightFormat q4 = w.format();
            long need = q4.repacking().packedBytes(ROWS, COLS);
            var full = w.withTranscodedCopy(arena.allocate(need, 64), new WeightMatrix.Affine(q4, null, null, 0));
            assertTrue(full.isTranscoded());

            var e = assertThrows(IllegalArgumentException.class,
                    () -> w.withTranscodedCopy(arena.allocate(need - 64, 64), new WeightMatrix.Affine(q4, null, null, 0)));
            assertTrue(e.getMessage().contains("blk.0.attn_q.weight") && e.getMessage().contains(String.valueOf(need)), e.getMessage());

            var scales = assertThrows(IllegalArgumentException.class,
                    () -> w.withTranscodedCopy(arena.allocate(need, 64), new WeightMatrix.Affine(q4, arena.allocate(4L * ROWS - 4), null, 0)));
            assertTrue(scales.getMessage().contains("row scales"), scales.getMessage());

            var offsets = assertThrows(IllegalArgumentException.class,
                    () -> w.withTranscodedCopy(arena.allocate(need, 64), new WeightMatrix.Affine(q4, null, arena.allocate(4L * ROWS), 32)));
            assertTrue(offsets.getMessage().contains("group offsets"), offsets.getMessage());
        }
    }
}
