package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;

/** Core's repacked layouts, as {@link Repacking}s of the table's entries ({@link WeightFormats}). */
final class Repackings {
    private Repackings() {}

    /** Q4_0 rows interleaved 32 to a group ({@link InterleavedQ4_0}); block scales held as {@link RebiasedF16} codes. */
    static final Repacking Q4_0_INTERLEAVED = new Repacking() {
        @Override public int groupRows() { return InterleavedQ4_0.ROWS; }
        @Override public boolean interleaved() { return true; }
        @Override public boolean applies(int rows, int cols) { return cols % 32 == 0 && rows >= InterleavedQ4_0.ROWS; }
        @Override public long packedBytes(int rows, int cols) { return InterleavedQ4_0.packedBytes(rows, cols); }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return RebiasedF16.scalesRepresentable(w, r0, r1); }
        @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ4_0.packGroups(w, dst, g0, g1); }
        @Override public int decodeGroups() { return InterleavedQ4_0.DECODE_GROUPS; }
        @Override public boolean wantsQ4Multipliers() { return true; }
        @Override public void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
            InterleavedQ4_0.compute(packed, nb, a, g0, g1, out, outOff, outStride, scales);
        }
        @Override public void decodeGroup(MemorySegment packed, int g, int nb, float[] panel, float[] scales) {
            InterleavedQ4_0.decodeGroup(packed, g, nb, panel, scales);
        }
    };

    /** Q8_0 rows interleaved 16 to a group ({@link InterleavedQ8_0}). */
    static final Repacking Q8_0_INTERLEAVED = new Repacking() {
        @Override public int groupRows() { return InterleavedQ8_0.ROWS; }
        @Override public boolean interleaved() { return true; }
        @Override public boolean applies(int rows, int cols) { return cols % 32 == 0 && rows >= InterleavedQ8_0.ROWS; }
        @Override public long packedBytes(int rows, int cols) { return InterleavedQ8_0.packedBytes(rows, cols); }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return RebiasedF16.scalesRepresentable(w, r0, r1); }
        @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ8_0.packGroups(w, dst, g0, g1); }
        @Override public int decodeGroups() { return InterleavedQ8_0.DECODE_GROUPS; }
        @Override public int fewTokenGroups(int nTokens) { return InterleavedQ8_0.fewTokenGroups(nTokens); }
        @Override public void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
            InterleavedQ8_0.compute(packed, nb, a, g0, g1, out, outOff, outStride, scales);
        }
        @Override public void decodeGroup(MemorySegment packed, int g, int nb, float[] panel, float[] scales) {
            InterleavedQ8_0.decodeGroup(packed, g, nb, panel, scales);
        }
    };

    /**
     * Q4_K rows interleaved {@link InterleavedQ4_K#ROWS} to a group (one row per 32-bit lane, the 16-bit
     * nibble products of {@link InterleavedQ4_0}); the prefill GEMM still decodes the file's blocks.
     */
    static final Repacking Q4_K_INTERLEAVED = new Repacking() {
        @Override public int groupRows() { return InterleavedQ4_K.ROWS; }
        @Override public boolean interleaved() { return true; }
        @Override public boolean applies(int rows, int cols) { return InterleavedQ4_K.canRepack(rows, cols); }
        @Override public long packedBytes(int rows, int cols) { return InterleavedQ4_K.packedBytes(rows, cols); }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return true; } // scales are kept as bytes and floats
        @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ4_K.pack(w, dst, g0, g1); }
        @Override public int decodeGroups() { return InterleavedQ4_K.DECODE_GROUPS; }
        @Override public KQuantMultipliers multipliers() { return InterleavedQ4_K.MULTIPLIERS; }
        @Override public boolean gemmReadsCopy() { return false; }
        @Override public void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
            InterleavedQ4_K.compute(packed, nb / 8, a, a.kMultipliers, g0, g1, out, outOff, outStride);
        }
    };

    /** F16 rows re-encoded so that no weight is subnormal ({@link RebiasedF16}); read by F16's own vector kernel. */
    static final Repacking F16_REENCODED = new Repacking() {
        @Override public int groupRows() { return 1; }
        @Override public boolean interleaved() { return false; }
        @Override public boolean applies(int rows, int cols) { return cols % 32 == 0; }
        @Override public long packedBytes(int rows, int cols) { return 2L * rows * cols; }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return RebiasedF16.representable(w, r0, r1); }
        @Override public void pack(WeightMatrix w, MemorySegment dst, int r0, int r1) { RebiasedF16.pack(w, dst, r0, r1); }
    };

    /**
     * Q6_K rows interleaved {@link InterleavedQ6_K#ROWS} to a group (one row per 32-bit lane, each quant's six
     * bits in one field, with the Q6_K multipliers); the prefill GEMM still decodes the file's blocks.
     */
    static final Repacking Q6_K_INTERLEAVED = new Repacking() {
        @Override public int groupRows() { return InterleavedQ6_K.ROWS; }
        @Override public boolean interleaved() { return true; }
        @Override public boolean applies(int rows, int cols) { return InterleavedQ6_K.canRepack(rows, cols); }
        @Override public long packedBytes(int rows, int cols) { return InterleavedQ6_K.packedBytes(rows, cols); }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return true; } // scales kept as bytes, d as floats
        @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ6_K.pack(w, dst, g0, g1); }
        @Override public int decodeGroups() { return InterleavedQ6_K.DECODE_GROUPS; }
        @Override public KQuantMultipliers multipliers() { return InterleavedQ6_K.MULTIPLIERS; }
        @Override public boolean gemmReadsCopy() { return false; }
        @Override public void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
            InterleavedQ6_K.compute(packed, nb / 8, a, a.kMultipliers, g0, g1, out, outOff, outStride);
        }
    };

    /**
     * Q5_K rows interleaved {@link InterleavedQ5_K#ROWS} to a group (one row per 32-bit lane, each quant's five
     * bits in one field, with the Q5_K multipliers); the prefill GEMM still decodes the file's blocks.
     */
    static final Repacking Q5_K_INTERLEAVED = new Repacking() {
        @Override public int groupRows() { return InterleavedQ5_K.ROWS; }
        @Override public boolean interleaved() { return true; }
        @Override public boolean applies(int rows, int cols) { return InterleavedQ5_K.canRepack(rows, cols); }
        @Override public long packedBytes(int rows, int cols) { return InterleavedQ5_K.packedBytes(rows, cols); }
        @Override public boolean representable(WeightMatrix w, int r0, int r1) { return true; } // scales are kept as bytes and floats
        @Override public void pack(WeightMatrix w, MemorySegment dst, int g0, int g1) { InterleavedQ5_K.pack(w, dst, g0, g1); }
        @Override public int decodeGroups() { return InterleavedQ5_K.DECODE_GROUPS; }
        @Override public KQuantMultipliers multipliers() { return InterleavedQ5_K.MULTIPLIERS; }
        @Override public boolean gemmReadsCopy() { return false; }
        @Override public void compute(MemorySegment packed, int nb, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] scales) {
            InterleavedQ5_K.compute(packed, nb / 8, a, a.kMultipliers, g0, g1, out, outOff, outStride);
        }
    };
}
