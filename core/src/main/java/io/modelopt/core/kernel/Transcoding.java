package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/**
 * How a format defined outside core runs on core's fastest kernels: each row is rewritten, at load,
 * into the blocks of a core {@linkplain #target() target} format that has an interleaved layout
 * (Q4_0 or Q8_0), plus two optional affine terms, so that
 *
 * <pre>   w[r][k] = rowScale(r) · target(r, k) + offset(r, k / offsetGroupSize())</pre>
 *
 * holds exactly for every weight the format's reference decoder gives. Group-wise INT2/INT3/INT4
 * fit Q4_0 blocks (a 4-bit code {@code n}, value {@code d·(n − 8)}; a zero point becomes the group's
 * offset {@code −d·(z − 8)}); per-channel INT8 fits Q8_0 blocks with {@code d = 1} and a row scale.
 *
 * <p>The CPU backend writes the target's interleaved copy straight from these rows, eight or
 * sixteen at a time, so the target's bytes are never held whole; the matrix then runs the target's
 * decode and prefill kernels, and {@link MatMul} adds the affine terms ({@code rows × groups}
 * multiply-adds per token, with the group sums of the F32 activations). The stored tensors stay the
 * reference ({@link WeightMatrix#dequantizeRow}). Where a shape does not fit ({@link #applies}) or the
 * kernels are scalar, the format's own kernels read the stored tensors.
 */
public interface Transcoding {
    /** The core format whose blocks {@link #transcodeRow} writes: the format of ggml type Q4_0 or Q8_0 ({@link WeightFormats#forFileType}). */
    WeightFormat target();

    /** Whether {@code w}'s rows can be rewritten (e.g. its columns are whole 32-weight blocks). */
    boolean applies(WeightMatrix w);

    /** Row {@code row} of {@code w} as {@code target().rowBytes(w.cols())} bytes of target blocks, into {@code dst} at {@code offset}. */
    void transcodeRow(WeightMatrix w, int row, MemorySegment dst, long offset);

    /** Weights per offset (a multiple of 32 dividing the columns), or 0 when there are no offsets. */
    default int offsetGroupSize() { return 0; }

    /** Weights per offset in {@code w} (e.g. its whole row for a per-channel zero point); by default {@link #offsetGroupSize()}. */
    default int offsetGroupSize(WeightMatrix w) { return offsetGroupSize(); }

    /** Row {@code row}'s {@code cols / offsetGroupSize(w)} offsets into {@code dst[0 ..]}. */
    default void rowOffsets(WeightMatrix w, int row, float[] dst) {
        throw new UnsupportedOperationException("no offsets");
    }

    /** Whether rows carry a scale applied after the target's dot product. */
    default boolean rowScaled() { return false; }

    /** Row {@code row}'s scale (only asked when {@link #rowScaled()}). */
    default float rowScale(WeightMatrix w, int row) { return 1f; }
}
