package io.modelopt.core.kernel;

import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Shared constants of the Vector API kernels: 512-bit float vectors (16 lanes, one per weight of
 * a half block) and the in-register widenings of the weight encodings. Only loaded in
 * {@link KernelMode#VECTOR}. The kernels spell their vector code out inside each method rather
 * than calling helpers: a vector passed to or returned from a call that the JIT does not inline
 * (and vector code compiles large) is boxed on the heap, which costs far more than the work.
 *
 * <p>Small integers become floats with the "magic number" trick where it saves an operation:
 * {@code intBitsToFloat(0x4B000000 | n) = 2^23 + n} exactly for {@code 0 <= n < 2^23}, so one OR
 * (fused with a preceding AND into one ternary-logic instruction) and one subtraction of
 * {@code 2^23 + offset} give {@code n - offset} as a float.
 */
final class Simd {
    private Simd() {}

    static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    static final VectorSpecies<Short> S16 = ShortVector.SPECIES_256;
    /** 8-lane species: one column of an 8-row GEMM slice ({@link Gemm}), written without masks. */
    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Bits of the float 2^23. */
    static final int MAGIC_BITS = 0x4B000000;
    static final float MAGIC = 0x1p23f;

    /** Lane indices 0..15. */
    static final IntVector IOTA = IntVector.zero(I).addIndex(1);
    /** Lane indices plus 12: the shifts that bring bit {@code 16 + lane} of a Q5_0 {@code qh} to bit 4. */
    static final IntVector IOTA_PLUS_12 = IOTA.add(12);

    // Half floats are widened by a plain Float.float16ToFloat loop, which the JIT vectorizes (F16Kernel.widen).

    /**
     * Permutations for summing the 16 lanes in a fixed pairwise order, written out in each kernel:
     * {@code v = v.add(v.rearrange(SWAP8)); … SWAP4, SWAP2, SWAP1; v.lane(0)}. {@code reduceLanes(ADD)}
     * may associate differently once compiled than when interpreted, which would make a result
     * depend on how warm the JIT is; that matters here because a last-bit difference can move a
     * later activation across a quantization boundary. Lane-wise adds and permutations are exact
     * in every mode. (Not a helper method: a vector passed to a call the JIT does not inline is boxed.)
     */
    /** Lanes 0–7 and 8–15 of a float vector: the two 8-row slices of a GEMM panel column ({@link Gemm}). */
    static final VectorMask<Float> LOW8 = VectorMask.fromLong(F, 0x00FFL);
    static final VectorMask<Float> HIGH8 = VectorMask.fromLong(F, 0xFF00L);

    static final VectorShuffle<Float> SWAP8 = VectorShuffle.fromOp(F, i -> i ^ 8);
    static final VectorShuffle<Float> SWAP4 = VectorShuffle.fromOp(F, i -> i ^ 4);
    static final VectorShuffle<Float> SWAP2 = VectorShuffle.fromOp(F, i -> i ^ 2);
    static final VectorShuffle<Float> SWAP1 = VectorShuffle.fromOp(F, i -> i ^ 1);
}

