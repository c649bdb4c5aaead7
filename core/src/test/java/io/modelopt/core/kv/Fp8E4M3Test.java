package io.modelopt.core.kv;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/** E4M3FN against its definition: the values of all 256 bytes, and nearest-even rounding by brute force. */
class Fp8E4M3Test {

    /** The value of byte c from the OCP definition, in double. */
    private static double value(int c) {
        int e = (c >> 3) & 15, m = c & 7;
        double s = (c & 0x80) != 0 ? -1 : 1;
        return e == 0 ? s * m / 8.0 * Math.pow(2, -6) : s * (1 + m / 8.0) * Math.pow(2, e - 7);
    }

    @Test
    void decodesEveryByteAndRoundTrips() {
        for (int c = 0; c < 256; c++) {
            if ((c & 0x7F) == 0x7F) {
                assertTrue(Float.isNaN(Fp8E4M3.decode((byte) c)));
                continue;
            }
            assertEquals(value(c), Fp8E4M3.decode((byte) c), 0.0, "byte " + c);
            if (c != 0x80) assertEquals((byte) c, Fp8E4M3.encode((float) value(c)), "byte " + c);
        }
        assertEquals(448.0, value(0x7E));
        assertEquals(Math.pow(2, -9), value(1));
    }

    @Test
    void roundsToNearestEvenAndSaturates() {
        Random r = new Random(5);
        for (int i = 0; i < 200_000; i++) {
            float x = (float) ((r.nextDouble() * 2 - 1) * Math.pow(2, r.nextInt(22) - 12));
            if (i % 7 == 0) { // exact midpoints between neighbours
                int c = r.nextInt(0x7E);
                x = (float) ((value(c) + value(c + 1)) / 2) * (r.nextBoolean() ? 1 : -1);
            }
            assertEquals(nearest(x), Fp8E4M3.encode(x) & 0xFF, "x = " + x);
        }
        assertEquals(0x7E, Fp8E4M3.encode(1e6f));
        assertEquals(0xFE, Fp8E4M3.encode(-500f) & 0xFF);
        assertEquals(0x7F, Fp8E4M3.encode(Float.NaN));
    }

    private static int nearest(float x) {
        double a = Math.min(Math.abs((double) x), 448);
        int best = 0;
        double bestErr = Double.MAX_VALUE;
        for (int c = 0; c <= 0x7E; c++) {
            double err = Math.abs(value(c) - a);
            if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
                best = c;
                bestErr = err;
            }
        }
        return (x < 0 || (x == 0 && 1 / x < 0) ? 0x80 : 0) | best;
    }
}
