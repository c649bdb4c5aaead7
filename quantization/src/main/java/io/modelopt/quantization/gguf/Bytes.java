package io.modelopt.quantization.gguf;

/** Little-endian stores into block byte arrays and ggml's half-float round trip. */
final class Bytes {
    private Bytes() {}

    static void putShort(byte[] b, int off, short v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
        b[off + 2] = (byte) (v >>> 16);
        b[off + 3] = (byte) (v >>> 24);
    }

    /** {@code GGML_FP32_TO_FP16}: round to nearest even. */
    static short half(float v) {
        return Float.floatToFloat16(v);
    }

    /** {@code GGML_FP16_TO_FP32}. */
    static float fromHalf(short h) {
        return Float.float16ToFloat(h);
    }

    /** Zeroes {@code n} bytes at {@code off}. */
    static void zero(byte[] b, int off, int n) {
        java.util.Arrays.fill(b, off, off + n, (byte) 0);
    }
}
