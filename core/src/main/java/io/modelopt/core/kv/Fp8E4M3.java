package io.modelopt.core.kv;

/**
 * The OCP FP8 E4M3 ("E4M3FN") byte: sign, 4 exponent bits (bias 7), 3 mantissa bits; no
 * infinities, {@code 0x7F}/{@code 0xFF} are NaN, the largest finite value is 448, the smallest
 * subnormal 2^-9. Encoding rounds to nearest, ties to even, and saturates at ±448 (as vLLM's
 * scaled FP8 quantization clamps); decoding is a table lookup.
 */
public final class Fp8E4M3 {
    private Fp8E4M3() {}

    public static final float MAX = 448f;
    private static final float[] DECODE = new float[256];

    static {
        for (int c = 0; c < 256; c++) DECODE[c] = decodeSlow(c);
    }

    private static float decodeSlow(int c) {
        int e = (c >>> 3) & 0xF, m = c & 7;
        float sign = (c & 0x80) != 0 ? -1f : 1f;
        if (e == 15 && m == 7) return Float.NaN;
        if (e == 0) return sign * m * 0x1p-9f;
        return sign * (1 + m / 8f) * Math.scalb(1f, e - 7);
    }

    /** The value of byte {@code b}. */
    public static float decode(byte b) { return DECODE[b & 0xFF]; }

    /** The decoding table, indexed by the unsigned byte (for kernels); do not modify. */
    static float[] table() { return DECODE; }

    /** The nearest E4M3 byte to {@code x} (ties to even), saturating at ±448; NaN gives 0x7F. */
    public static byte encode(float x) {
        if (Float.isNaN(x)) return 0x7F;
        int bits = Float.floatToRawIntBits(x);
        int sign = (bits >>> 24) & 0x80;
        float a = Math.abs(x);
        int code;
        if (a >= MAX) {
            code = 0x7E;
        } else if (a < 0x1p-6f) {
            // subnormal: multiples of 2^-9; 8 of them carry into the smallest normal (code 0x08)
            code = (int) Math.rint(a * 0x1p9f);
        } else {
            int abits = bits & 0x7FFFFFFF;
            int e = (abits >>> 23) - 127, m = abits & 0x7FFFFF;
            int r = m >>> 20, rem = m & 0xFFFFF;
            if (rem > 0x80000 || (rem == 0x80000 && (r & 1) == 1)) r++;
            code = Math.min(0x7E, ((e + 7) << 3) + r);
        }
        return (byte) (sign | code);
    }
}
