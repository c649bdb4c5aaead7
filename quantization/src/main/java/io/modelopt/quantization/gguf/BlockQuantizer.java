package io.modelopt.quantization.gguf;

import io.modelopt.core.tensor.GgmlType;
import java.util.Objects;

/**
 * Quantizes rows of floats into one ggml block format exactly as ggml's {@code quantize_<type>}
 * (ggml-quants.c) does, the function llama-quantize calls: without an importance matrix the
 * {@code quantize_row_<type>_ref} path, with one the importance-weighted search.
 *
 * <p>Implementations are stateless and thread-safe; scratch space is allocated per call.
 */
public interface BlockQuantizer {

    /** The block format written. */
    GgmlType type();

    /**
     * Quantizes one row: {@code x[xOff..xOff+n)} to {@code type().bytesFor(n)} bytes at
     * {@code dst[dstOff..)}. {@code importance}, when not null, holds one weight per column
     * ({@code importance[0..n)}, llama.cpp's {@code quant_weights}); types that take no weights
     * (Q8_0) ignore it.
     *
     * @throws IllegalArgumentException {@code n} is not a multiple of the block size, or the
     *         importance row is shorter than {@code n}
     */
    void quantizeRow(float[] x, int xOff, int n, float[] importance, byte[] dst, int dstOff);

    /**
     * Quantizes {@code rows} consecutive rows of {@code nPerRow} values, each with the same
     * importance row (as {@code ggml_quantize_chunk} does for a 2-D tensor).
     */
    default void quantize(float[] src, int srcOff, int rows, int nPerRow, float[] importance, byte[] dst, int dstOff) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        checkRow(type(), nPerRow, importance);
        long rowBytes = type().bytesFor(nPerRow);
        if (rows < 0 || srcOff < 0 || (long) srcOff + (long) rows * nPerRow > src.length) {
            throw new IllegalArgumentException(type() + ": " + rows + " rows of " + nPerRow + " values from offset " + srcOff
                    + " exceed the source array of " + src.length);
        }
        if (dstOff < 0 || dstOff + rows * rowBytes > dst.length) {
            throw new IllegalArgumentException(type() + ": " + rows + " rows need " + rows * rowBytes + " bytes from offset "
                    + dstOff + ", the destination holds " + dst.length);
        }
        for (int r = 0; r < rows; r++) {
            quantizeRow(src, srcOff + r * nPerRow, nPerRow, importance, dst, (int) (dstOff + r * rowBytes));
        }
    }

    /** Validates a row length and an importance row for {@code type}, with a message naming both. */
    static void checkRow(GgmlType type, int n, float[] importance) {
        if (n <= 0 || n % type.blockSize() != 0) {
            throw new IllegalArgumentException(type + " needs rows whose length is a positive multiple of " + type.blockSize()
                    + ", got " + n);
        }
        if (importance != null && importance.length < n) {
            throw new IllegalArgumentException(type + ": importance row has " + importance.length + " values, the row has " + n);
        }
    }

    /** The quantizer for {@code type}: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K or IQ4_NL (the k-quant fallback). */
    static BlockQuantizer of(GgmlType type) {
        return switch (type) {
            case Q4_0 -> Q4_0Quantizer.INSTANCE;
            case Q4_1 -> Q4_1Quantizer.INSTANCE;
            case Q5_0 -> Q5_0Quantizer.INSTANCE;
            case Q5_1 -> Q5_1Quantizer.INSTANCE;
            case Q8_0 -> Q8_0Quantizer.INSTANCE;
            case Q2_K -> Q2_KQuantizer.INSTANCE;
            case Q3_K -> Q3_KQuantizer.INSTANCE;
            case Q4_K -> Q4_KQuantizer.INSTANCE;
            case Q5_K -> Q5_KQuantizer.INSTANCE;
            case Q6_K -> Q6_KQuantizer.INSTANCE;
            case IQ4_NL -> IQ4_NLQuantizer.INSTANCE;
            default -> throw new IllegalArgumentException("no quantizer for ggml type " + type
                    + " (supported: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL)");
        };
    }
}
