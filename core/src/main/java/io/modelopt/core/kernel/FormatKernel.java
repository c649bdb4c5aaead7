package io.modelopt.core.kernel;

/**
 * The dot products of one weight format, over a range of weight rows and all tokens of a call.
 * Implementations are stateless singletons: a scalar one written plainly after ggml's generic
 * {@code ggml_vec_dot_*} and a Vector API one, both reading the weights in place. A format
 * registered from outside core ({@link WeightFormatProvider}) implements its own, reading the
 * activations through {@link Activations}' accessors.
 */
public interface FormatKernel {
    /** The form the activations must be in ({@link Activations#prepare}). */
    Activations.Kind activations();

    /**
     * {@code out[outOff + t*outStride + r] = Σ_k W[r][k]·x_t[k]} for rows {@code [rowStart, rowEnd)}
     * and tokens {@code [0, a.nTokens)}.
     */
    void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride);

    /**
     * Rows {@code [row, row + n)} decoded to floats at {@code dst[i * cols ..]}, with the values of
     * the format's reference decoder (the prefill GEMM multiplies these). Kernels of the common
     * formats override this with a vector decoder giving the same floats.
     */
    default void dequantizeRows(WeightMatrix w, int row, int n, float[] dst) {
        for (int i = 0; i < n; i++) w.dequantizeRow(row + i, dst, i * w.cols());
    }

    /**
     * Whether prefill-sized calls may take the float GEMM over {@link #dequantizeRows} (the same
     * function up to float rounding). Q4_1 says no: ggml's Q8_1 sum term ({@code half(d·Σq)}) is not
     * a product of decoded values, so its dot product stays.
     */
    default boolean decodesForGemm() { return true; }

    /**
     * Whether a one-token call on a repacked matrix wants the activations pre-scaled for the
     * re-encoded F16 layout ({@link Activations#f16Scaled}, {@link RebiasedF16}).
     */
    default boolean wantsScaledF16Activations() { return false; }
}
