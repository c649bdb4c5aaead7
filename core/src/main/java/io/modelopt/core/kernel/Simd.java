package io.modelopt.core.kernel;

import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Shared constants of the Vector API kernels, for the one vector width this process runs at
 * ({@link VectorWidth#BITS}: 512, 256 or 128 bits). Every kernel is written once against these
 * species: {@link #L} float lanes per vector, loops over a block's {@code 32 / L} vectors and the
 * {@code if (Simd.L > 8)} guards below are constants to the JIT (static finals), so it compiles
 * each kernel for exactly one width, as if it had been written for it. Only loaded in
 * {@link KernelMode#VECTOR}.
 *
 * <p>The kernels spell their vector code out inside each method rather than calling helpers: a
 * vector passed to or returned from a call that the JIT does not inline (and vector code compiles
 * large) is boxed on the heap, which costs far more than the work.
 *
 * <p>Small integers become floats with the "magic number" trick where it saves an operation:
 * {@code intBitsToFloat(0x4B000000 | n) = 2^23 + n} exactly for {@code 0 <= n < 2^23}, so one OR
 * (fused with a preceding AND into one ternary-logic instruction) and one subtraction of
 * {@code 2^23 + offset} give {@code n - offset} as a float.
 *
 * <p><b>Reductions.</b> A vector's lanes are summed in a fixed pairwise order, written out in each
 * kernel:
 * <pre>
 *   if (Simd.L > 8) v = v.add(v.rearrange(Simd.SWAP8));
 *   if (Simd.L > 4) v = v.add(v.rearrange(Simd.SWAP4));
 *   v = v.add(v.rearrange(Simd.SWAP2));
 *   v = v.add(v.rearrange(Simd.SWAP1));
 *   float s = v.lane(0);
 * </pre>
 * {@code reduceLanes(ADD)} may associate differently once compiled than when interpreted, which
 * would make a result depend on how warm the JIT is; that matters here because a last-bit
 * difference can move a later activation across a quantization boundary. Lane-wise adds and
 * permutations are exact in every mode. At 512 bits this is the order the kernels always used;
 * at narrower widths the same tree over fewer lanes (so results differ between widths in the
 * last bits, as they differ between llama.cpp's AVX2 and AVX-512 builds).
 *
 * <p>Nothing here assumes x86: the 128-bit shapes are the ones NEON has (4 float lanes, 64-bit
 * byte loads widened in two parts), and no kernel may use a species wider than {@link #F}
 * (a species the hardware lacks runs in the Vector API's Java fallback, boxing every vector).
 */
final class Simd {
    private Simd() {}

    /** Floats: the process's width ({@link VectorWidth#BITS}). */
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED.vectorBitSize() == VectorWidth.BITS
            ? FloatVector.SPECIES_PREFERRED : VectorSpecies.of(float.class, VectorShape.forBitSize(VectorWidth.BITS));
    /** Float lanes per vector: 16, 8 or 4. */
    static final int L = F.length();
    /** Ints of the same shape ({@link #L} lanes). */
    static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    /** Shorts of the same shape ({@code 2L} lanes; e.g. 16-bit sums of a 32-bit lane's halves). */
    static final VectorSpecies<Short> S = VectorSpecies.of(short.class, F.vectorShape());
    /** Shorts with one lane per float lane (half the width): halves widened to {@link #F}. */
    static final VectorSpecies<Short> SL = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * L));
    /** Bytes of the same shape ({@code 4L} lanes). */
    static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, F.vectorShape());
    /**
     * Bytes to widen to {@link #I}: {@code L} lanes at 512 and 256 bits; at 128 bits 8 lanes (the
     * narrowest byte species), widened in {@link #BL_PARTS} = 2 parts
     * ({@code convertShape(ZERO_EXTEND_B2I, Simd.I, part)}).
     */
    static final VectorSpecies<Byte> BL = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    /** Int vectors per {@link #BL} load: 1, or 2 at 128 bits. */
    static final int BL_PARTS = BL.length() / L;

    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Bits of the float 2^23. */
    static final int MAGIC_BITS = 0x4B000000;
    static final float MAGIC = 0x1p23f;

    /** Lane indices 0..L-1. */
    static final IntVector IOTA = IntVector.zero(I).addIndex(1);

    /** The pairwise reduction's permutations (see the class comment); null where the width has no such lanes. */
    static final VectorShuffle<Float> SWAP8 = L > 8 ? VectorShuffle.fromOp(F, i -> i ^ 8) : null;
    static final VectorShuffle<Float> SWAP4 = L > 4 ? VectorShuffle.fromOp(F, i -> i ^ 4) : null;
    static final VectorShuffle<Float> SWAP2 = VectorShuffle.fromOp(F, i -> i ^ 2);
    static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);

    /** Vectors of floats per 32-value block: 2, 4 or 8. */
    static final int PER_BLOCK = 32 / L;
}
