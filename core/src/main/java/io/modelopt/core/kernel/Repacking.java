package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/**
 * A weight format's load-time copy in a layout its vector kernels read faster (as llama.cpp
 * repacks Q4_0 into {@code block_q4_0x8}): rows interleaved in groups ({@link InterleavedQ4_0},
 * {@link InterleavedQ8_0}), or every row re-encoded ({@link RebiasedF16}). Part of a
 * {@link WeightFormat}; {@link WeightMatrix#repacked} makes the copy and {@link MatMul} hands the
 * calls to it. The memory figures count the copy ({@link WeightMatrix#residentBytes()}).
 */
interface Repacking {
    /** Rows per group of the layout (1 when rows are re-encoded one by one). */
    int groupRows();

    /**
     * Whether the copy interleaves rows, so that {@link #compute} and {@link #decodeGroup} read it
     * (otherwise the format's own vector kernel reads the re-encoded rows).
     */
    boolean interleaved();

    /** Whether a matrix of this shape has a copy at all (e.g. at least one whole group, whole 32-column blocks). */
    boolean applies(int rows, int cols);

    /** Bytes of the copy of a {@code rows × cols} matrix. */
    long packedBytes(int rows, int cols);

    /** Whether rows {@code [r0, r1)} can be held by the layout (checked before anything is allocated). */
    boolean representable(WeightMatrix w, int r0, int r1);

    /** Fills groups {@code [g0, g1)} of the copy {@code dst} (for a re-encoded layout, rows). */
    void pack(WeightMatrix w, MemorySegment dst, int g0, int g1);

    /** Row groups of a one-token call's pass (its kernel takes several at once). */
    default int decodeGroups() { return 1; }

    /** Row groups of a pass of a call of {@code nTokens} tokens, 2 to 15 (a decode step of several sequences). */
    default int fewTokenGroups(int nTokens) { return 1; }

    /** Whether the group kernel wants the Q4_0 multipliers with the activations ({@link Activations#q4Multipliers}). */
    default boolean wantsQ4Multipliers() { return false; }

    /** The k-quant multipliers the group kernel wants with the activations ({@link Activations#kMultipliers}), or null. */
    default KQuantMultipliers multipliers() { return null; }

    /**
     * Whether the prefill GEMM decodes its panels from the copy ({@link #decodeGroup}); if not, it
     * reads the file, whose pages then stay resident beside the copy.
     */
    default boolean gemmReadsCopy() { return true; }

    /** Groups {@code [g0, g1)} of an interleaved copy, all tokens (see {@link InterleavedQ4_0#compute}). */
    default void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
        throw new UnsupportedOperationException("not an interleaved layout");
    }

    /** Group {@code g} decoded into the prefill GEMM's 8-row slices (see {@link InterleavedQ4_0#decodeGroup}). */
    default void decodeGroup(MemorySegment packed, int g, int nb, float[] panel, float[] scales) {
        throw new UnsupportedOperationException("not an interleaved layout");
    }
}
