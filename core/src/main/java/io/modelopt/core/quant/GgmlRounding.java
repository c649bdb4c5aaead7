package io.modelopt.core.quant;

/**
 * The rounding functions ggml's quantizers use, with C semantics (they differ from
 * {@link Math#round}, which rounds halves towards positive infinity).
 */
public final class GgmlRounding {
    private GgmlRounding() {}

    /** C {@code roundf}: halves away from zero. Computed in double so {@code |x| + 0.5} is exact. */
    public static float roundf(float x) {
        return (float) Math.copySign(Math.floor(Math.abs((double) x) + 0.5), x);
    }

    /**
     * ggml's {@code nearest_int}: adds 1.5·2²³ so that the float adder rounds to an integer
     * (ties to even), then reads the low mantissa bits. Valid for |x| ≤ 4194303, as ggml asserts;
     * NaN gives 0 (as the C code does).
     */
    public static int nearestInt(float x) {
        float v = x + 12582912.0f;
        return (Float.floatToRawIntBits(v) & 0x007fffff) - 0x00400000;
    }

    /** C's {@code (int)f} then {@code (int8_t)} conversion as x86 does it: truncation, NaN/overflow give 0 after the byte cast. */
    static int truncToInt8(float f) {
        return (byte) (int) f;
    }
}
