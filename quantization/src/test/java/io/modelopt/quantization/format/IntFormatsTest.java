package io.modelopt.quantization.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.kernel.Transcoding;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The shared integer-format arithmetic: reference decoder, and the Q4_0/Q8_0 rewrite reproducing it bit for bit. */
class IntFormatsTest {

    static Stream<IntScheme> schemes() { return IntRowsForTests.schemes(); }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemes")
    void referenceDecoderIsScaleTimesCodeMinusZero(IntScheme s) {
        try (Arena arena = Arena.ofConfined()) {
            var layout = IntRowsForTests.randomLayout(s, 3, 256, 11);
            WeightMatrix w = layout.matrix(arena, "dec." + s);
            float[] row = new float[256];
            for (int r = 0; r < 3; r++) {
                w.dequantizeRow(r, row, 0);
                IntRow src = layout.rows[r];
                for (int k = 0; k < 256; k++) {
                    int g = k / src.groupSize;
                    // computed here in double: the float product of two exact operands, rounded once, is the same
                    float expected = (float) ((double) src.scales[g] * (src.codes[k] - src.zeros[g]));
                    assertEquals(Float.floatToIntBits(expected), Float.floatToIntBits(row[k]), s + " row " + r + " k " + k);
                }
            }
        }
    }

    /**
     * For random rows of every scheme, core's own Q4_0/Q8_0 reference decode of the rewritten row,
     * times the row scale, plus the offsets, equals the format's reference decoder bit for bit
     * (±0 taken as equal: see {@link IntTranscodings}).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("schemes")
    void transcodingReproducesTheReferenceDecoderBitForBit(IntScheme s) {
        for (int cols : new int[] {128, 384, 512}) {
            if (!s.fits(cols)) continue;
            try (Arena arena = Arena.ofConfined()) {
                var layout = IntRowsForTests.randomLayout(s, 4, cols, cols * 31L + s.hashCode());
                WeightMatrix w = layout.matrix(arena, "tc." + s + "." + cols);
                Transcoding t = w.format().transcoding();
                assertNotNull(t, s + " has a rewrite");
                assertTrue(t.applies(w));
                GgmlType targetType = s.bits() == 8 ? GgmlType.Q8_0 : GgmlType.Q4_0;
                assertSame(WeightFormats.forFileType(targetType).orElseThrow(), t.target());
                assertEquals(s.scaleType() == IntScheme.ScaleType.F32, t.rowScaled());
                int ogs = t.offsetGroupSize(w);
                assertEquals(s.symmetric(), ogs == 0, "offsets exactly when asymmetric");
                if (ogs > 0) assertEquals(0, cols % ogs);

                long rowBytes = t.target().rowBytes(cols);
                MemorySegment blocks = arena.allocate(rowBytes + 7);
                float[] target = new float[cols], expected = new float[cols];
                float[] offsets = ogs > 0 ? new float[cols / ogs] : null;
                for (int r = 0; r < w.rows(); r++) {
                    t.transcodeRow(w, r, blocks, 7); // at an odd offset: the blocks are unaligned
                    if (targetType == GgmlType.Q4_0) Q4_0.dequantize(blocks, 7, target, 0, cols);
                    else Q8_0.dequantize(blocks, 7, target, 0, cols);
                    if (ogs > 0) t.rowOffsets(w, r, offsets);
                    float rowScale = t.rowScaled() ? t.rowScale(w, r) : 1f;
                    w.dequantizeRow(r, expected, 0);
                    for (int k = 0; k < cols; k++) {
                        float got = rowScale * target[k] + (ogs > 0 ? offsets[k / ogs] : 0f);
                        assertEquals(Float.floatToIntBits(expected[k] + 0f), Float.floatToIntBits(got + 0f),
                                () -> s + " cols " + cols + ": rewritten weight differs from the reference");
                    }
                }
            }
        }
    }

    @Test
    void rewriteAppliesOnlyToWhole32WeightBlocks() {
        try (Arena arena = Arena.ofConfined()) {
            WeightMatrix w = IntRowsForTests.randomLayout(IntScheme.int8(), 2, 48, 1).matrix(arena, "narrow");
            assertFalse(w.format().transcoding().applies(w), "48 columns are not whole Q8_0 blocks");
            WeightMatrix ok = IntRowsForTests.randomLayout(IntScheme.int8(), 2, 64, 1).matrix(arena, "ok");
            assertTrue(ok.format().transcoding().applies(ok));
        }
    }

    @Test
    void f32ScalesWithGroupsOrZeroPointsHaveNoRewrite() {
        for (IntScheme s : new IntScheme[] {
                new IntScheme(8, 128, true, IntScheme.ScaleType.F32),
                new IntScheme(8, IntScheme.PER_CHANNEL, false, IntScheme.ScaleType.F32),
                new IntScheme(4, 32, false, IntScheme.ScaleType.F32)}) {
            try (Arena arena = Arena.ofConfined()) {
                WeightMatrix w = IntRowsForTests.randomLayout(s, 2, 256, 3).matrix(arena, "f32." + s);
                assertNull(w.format().transcoding(), s + ": an F32 scale times an offset would round");
            }
        }
    }

    @Test
    void layoutOfAFormatMadeHere() {
        var layout = IntRowsForTests.randomLayout(IntScheme.of(4, 128, false), 1, 128, 5);
        WeightFormat f = IntFormats.create("LAYOUT_OF", layout, 1, 1);
        assertSame(layout, IntFormats.layout(f).orElseThrow());
        assertTrue(IntFormats.layout(WeightFormats.forFileType(GgmlType.Q4_0).orElseThrow()).isEmpty());
    }
}
