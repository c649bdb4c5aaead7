package io.modelopt.quantization.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Our packed storage: the bit layout (checked bit by bit from its definition), the registry, bits per weight, bad input. */
class PackedIntLayoutTest {

    static Stream<IntScheme> schemes() { return PackedIntLayout.schemes().stream(); }

    /** Code {@code k} of the LSB-first bit stream at {@code off}, read one bit at a time (the definition, not our unpacker). */
    static int bitStreamCode(MemorySegment s, long off, int bits, int k) {
        int v = 0;
        for (int j = 0; j < bits; j++) {
            long bit = (long) k * bits + j;
            int b = s.get(ValueLayout.JAVA_BYTE, off + bit / 8) >> (int) (bit % 8) & 1;
            v |= b << j;
        }
        return v;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schemes")
    void rowsRoundTripThroughTheDocumentedBitLayout(IntScheme s) {
        int rows = 3, cols = 384;
        var src = IntRowsForTests.randomLayout(s, rows, cols, s.hashCode());
        try (Arena arena = Arena.ofConfined()) {
            PackedIntTensors t = PackedIntTensors.allocate("blk.0.ffn_up.weight", s, rows, cols, arena);
            for (int r = 0; r < rows; r++) t.writeRow(r, src.rows[r]);
            List<TensorData> ts = t.tensors();
            int groups = s.groups(cols), zb = (groups * s.bits() + 7) / 8;
            assertEquals(s.symmetric() ? 2 : 3, ts.size());
            assertTensor(ts.get(0), "blk.0.ffn_up.weight", GgmlType.I32, cols * s.bits() / 32, rows);
            assertTensor(ts.get(1), "blk.0.ffn_up.weight_scale", s.scaleType() == IntScheme.ScaleType.F16 ? GgmlType.F16 : GgmlType.F32, groups, rows);
            if (!s.symmetric()) assertTensor(ts.get(2), "blk.0.ffn_up.weight_zero_point", GgmlType.I8, zb, rows);

            for (int r = 0; r < rows; r++) {
                IntRow want = src.rows[r];
                long rowOff = (long) r * cols * s.bits() / 8;
                for (int k = 0; k < cols; k++) assertEquals(want.codes[k], bitStreamCode(ts.get(0).data(), rowOff, s.bits(), k), "code " + k);
                for (int g = 0; g < groups; g++) {
                    float scale = s.scaleType() == IntScheme.ScaleType.F16
                            ? Float.float16ToFloat(ts.get(1).data().get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * (r * groups + g)))
                            : ts.get(1).data().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * (r * groups + g));
                    assertEquals(want.scales[g], scale);
                    if (!s.symmetric()) assertEquals(want.zeros[g], bitStreamCode(ts.get(2).data(), (long) r * zb, s.bits(), g), "zero " + g);
                }
            }
            // and our reader gives the rows back
            WeightMatrix w = t.matrix();
            assertSame(PackedIntLayout.format(s), w.format());
            assertEquals(t.byteSize(), w.byteSize());
            IntRow back = new IntRow(s, cols);
            float[] decoded = new float[cols];
            for (int r = 0; r < rows; r++) {
                IntFormats.layout(w.format()).orElseThrow().readRow(w, r, back);
                assertArrayEquals(src.rows[r].codes, back.codes);
                assertArrayEquals(src.rows[r].scales, back.scales);
                assertArrayEquals(src.rows[r].zeros, back.zeros);
                w.dequantizeRow(r, decoded, 0);
                for (int k = 0; k < cols; k++) assertEquals(src.rows[r].value(k), decoded[k]);
            }
        }
    }

    private static void assertTensor(TensorData t, String name, GgmlType type, long ne0, long ne1) {
        assertEquals(name, t.name());
        assertEquals(type, t.type());
        assertArrayEquals(new long[] {ne0, ne1}, t.shape(), name);
    }

    @Test
    void everySchemeIsRegisteredUnderItsName() {
        assertEquals(33, PackedIntLayout.schemes().size());
        for (IntScheme s : PackedIntLayout.schemes()) {
            assertSame(PackedIntLayout.format(s), WeightFormats.named(s.formatName()).orElseThrow(), s.formatName());
        }
        assertThrows(IllegalArgumentException.class, () -> PackedIntLayout.format(new IntScheme(4, 128, true, IntScheme.ScaleType.F32)));
    }

    /** Bits per weight as stored, on a 2048-column row (TinyLlama's hidden size). */
    @Test
    void bitsPerWeightAreTheStoredBytes() {
        assertEquals(4 + 16.0 / 128, PackedIntLayout.bitsPerWeight(IntScheme.of(4, 128, true), 2048)); // 4.125
        assertEquals(4 + 16.0 / 128 + 4.0 / 128, PackedIntLayout.bitsPerWeight(IntScheme.of(4, 128, false), 2048)); // 4.15625
        assertEquals(8 + 16.0 / 2048, PackedIntLayout.bitsPerWeight(IntScheme.int8(), 2048)); // 8.0078125
        assertEquals(8 + 32.0 / 2048, PackedIntLayout.bitsPerWeight(new IntScheme(8, -1, true, IntScheme.ScaleType.F32), 2048));
        // a per-channel INT3 zero point takes a whole byte
        assertEquals(3 + 16.0 / 2048 + 8.0 / 2048, PackedIntLayout.bitsPerWeight(IntScheme.of(3, -1, false), 2048));
        try (Arena arena = Arena.ofConfined()) {
            PackedIntTensors t = PackedIntTensors.allocate("w.weight", IntScheme.of(4, 128, false), 4, 2048, arena);
            assertEquals(4 * (1024 + 32 + 8), t.byteSize());
            assertEquals(4.15625, t.bitsPerWeight());
        }
    }

    @Test
    void int8PerChannelTakesRowsOfFourColumns() {
        try (Arena arena = Arena.ofConfined()) {
            var src = IntRowsForTests.randomLayout(IntScheme.int8(), 2, 172, 9); // stories260K's ffn_down
            PackedIntTensors t = PackedIntTensors.allocate("blk.0.ffn_down.weight", IntScheme.int8(), 2, 172, arena);
            for (int r = 0; r < 2; r++) t.writeRow(r, src.rows[r]);
            float[] row = new float[172];
            t.matrix().dequantizeRow(1, row, 0);
            for (int k = 0; k < 172; k++) assertEquals(src.rows[1].value(k), row[k]);
        }
    }

    @Test
    void columnsThatDoNotFitNameTheTensorAndWhatWouldWork() {
        try (Arena arena = Arena.ofConfined()) {
            var e = assertThrows(IllegalArgumentException.class, () -> PackedIntTensors.allocate("blk.3.ffn_down.weight", IntScheme.of(4, 64, true), 8, 96, arena));
            assertTrue(e.getMessage().contains("blk.3.ffn_down.weight"), e.getMessage());
            assertTrue(e.getMessage().contains("group sizes that would work at 4 bits: 32, -1 (per channel)"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> PackedIntTensors.allocate("blk.0.ffn_down.weight", IntScheme.of(4, 32, false), 8, 172, arena));
            assertTrue(e.getMessage().contains("blk.0.ffn_down.weight") && e.getMessage().contains("no group size works at 4 bits; INT8 per channel (-1) would"), e.getMessage());
        }
    }

    @Test
    void badRowsAreRefused() {
        IntScheme s = IntScheme.of(4, 32, false);
        try (Arena arena = Arena.ofConfined()) {
            PackedIntTensors t = PackedIntTensors.allocate("x.weight", s, 2, 64, arena);
            IntRow r = IntRowsForTests.randomRow(s, 64, new Random(1));
            assertThrows(IllegalArgumentException.class, () -> t.writeRow(2, r));
            assertThrows(IllegalArgumentException.class, () -> t.writeRow(0, new IntRow(s, 96)));
            r.codes[5] = 16;
            var e = assertThrows(IllegalArgumentException.class, () -> t.writeRow(0, r));
            assertTrue(e.getMessage().contains("x.weight row 0: code 16 at 5"), e.getMessage());
            r.codes[5] = 1;
            r.zeros[1] = -1;
            assertThrows(IllegalArgumentException.class, () -> t.writeRow(0, r));
            PackedIntTensors sym = PackedIntTensors.allocate("y.weight", IntScheme.of(4, 32, true), 2, 64, arena);
            IntRow sr = IntRowsForTests.randomRow(IntScheme.of(4, 32, true), 64, new Random(2));
            sr.zeros[0] = 3;
            assertThrows(IllegalArgumentException.class, () -> sym.writeRow(0, sr), "a symmetric row keeps its implicit zero");
        }
    }
}
