package io.modelopt.core.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ContiguousKvCacheTest {
    @Test
    void sizeIsExact() {
        try (var c = new ContiguousKvCache(4, 2, 64, 3, 256, KvDtype.F16)) {
            assertEquals(128, c.kvDim());
            assertEquals(2L * 4 * 3 * 256 * 128 * 2, c.byteSize());
            assertEquals(3L * 256 * 128 * 2, c.keys(0).byteSize());
            assertEquals(128, c.entryBytes());
        }
        try (var c = new ContiguousKvCache(5, 1, 32, 1, 128, KvDtype.F32)) {
            assertEquals(2L * 5 * 128 * 32 * 4, c.byteSize());
        }
    }

    @Test
    void f32RoundTripIsExactAndF16RoundsToNearest() {
        float[] row = new float[24];
        for (int i = 0; i < row.length; i++) row[i] = (float) Math.sin(i * 1.3) * 100 + 1e-3f * i;
        for (KvDtype dt : new KvDtype[] {KvDtype.F32, KvDtype.F16}) { // the others: KvQuantizedStorageTest
            try (var c = new ContiguousKvCache(2, 3, 8, 2, 8, dt)) {
                c.writeKey(1, 1, 5, row, 0);
                c.writeValue(1, 1, 5, row, 0);
                float[] k = new float[26], v = new float[24];
                c.readKey(1, 1, 5, k, 2);
                c.readValue(1, 1, 5, v, 0);
                for (int i = 0; i < 24; i++) {
                    float expected = dt == KvDtype.F32 ? row[i] : Float.float16ToFloat(Float.floatToFloat16(row[i]));
                    assertEquals(expected, k[2 + i], 0f);
                    assertEquals(expected, v[i], 0f);
                }
                // other slots untouched (zero)
                float[] other = new float[24];
                c.readKey(1, 0, 5, other, 0);
                for (float f : other) assertEquals(0f, f);
                c.readKey(0, 1, 5, other, 0);
                for (float f : other) assertEquals(0f, f);
            }
        }
    }

    /**
     * The documented layout [kvHead][seq][pos][headDim]: head h's entry of (seq, pos) at
     * entryOffset(slot) + h · headStride, one head's positions back to back.
     */
    @Test
    void eachHeadsPositionsAreContiguous() {
        int heads = 3, headDim = 4, seqs = 2, positions = 5;
        try (var c = new ContiguousKvCache(1, heads, headDim, seqs, positions, KvDtype.F32)) {
            assertEquals((long) seqs * positions * headDim * 4, c.headStride());
            float[] row = new float[heads * headDim];
            for (int s = 0; s < seqs; s++) {
                for (int p = 0; p < positions; p++) {
                    for (int i = 0; i < row.length; i++) row[i] = 1000 * s + 100 * p + i;
                    c.writeKey(0, s, p, row, 0);
                }
            }
            for (int s = 0; s < seqs; s++) {
                for (int h = 0; h < heads; h++) {
                    for (int p = 0; p < positions; p++) {
                        long expected = ((long) (h * seqs + s) * positions + p) * headDim * 4;
                        assertEquals(expected, c.entryOffset(c.slot(s, p)) + h * c.headStride());
                        for (int d = 0; d < headDim; d++) {
                            assertEquals(1000 * s + 100 * p + h * headDim + d, c.keys(0).get(KvCache.F32_LE, expected + 4L * d), 0f);
                        }
                    }
                }
            }
        }
    }

    @Test
    void lengthsClearTruncate() {
        try (var c = new ContiguousKvCache(1, 2, 4, 2, 16, KvDtype.F32)) {
            assertEquals(16, c.capacity(1));
            c.setLength(1, 10);
            assertEquals(10, c.length(1));
            assertEquals(0, c.length(0));
            c.truncate(1, 4);
            assertEquals(4, c.length(1));
            assertThrows(IllegalArgumentException.class, () -> c.truncate(1, 5));
            assertThrows(IllegalArgumentException.class, () -> c.setLength(1, 17));
            c.clear(1);
            assertEquals(0, c.length(1));
            assertEquals(16 + 3, c.slot(1, 3));
            var e = assertThrows(IndexOutOfBoundsException.class, () -> c.slot(2, 0));
            assertTrue(e.getMessage().contains("sequence id 2"), e.getMessage());
            e = assertThrows(IndexOutOfBoundsException.class, () -> c.slot(0, 16));
            assertTrue(e.getMessage().contains("position 16"), e.getMessage());
        }
    }

    @Test
    void absurdSizesFailClearly() {
        var e = assertThrows(IllegalArgumentException.class, () -> new ContiguousKvCache(1 << 20, 1 << 10, 1 << 10, 1 << 20, 1 << 20, KvDtype.F32));
        assertTrue(e.getMessage().contains("overflows"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ContiguousKvCache(0, 1, 8, 1, 1, KvDtype.F32));
        assertThrows(IllegalArgumentException.class, () -> new ContiguousKvCache(1, 0, 8, 1, 1, KvDtype.F32));
    }
}
