package io.modelopt.core.kernel;

import jdk.incubator.vector.FloatVector;

/**
 * The prefill path: a register-blocked float GEMM over decoded weights. Weight rows are decoded
 * once per call, a chunk of {@link #CHUNK_ROWS} at a time (repacked matrices: one row group,
 * {@link #computePacked}), into per-thread 8-row slices with each column's 8 weights adjacent;
 * then every tile of {@link #TILE} tokens passes over the chunk's slices as an outer product: per
 * column {@code k}, each row's weight is broadcast and multiplied into vectors of {@code L}
 * tokens ({@code xt}, the transposed activations, stored in contiguous tiles). No reductions.
 *
 * <p>Tiles are 8 rows × 2 vectors ({@link #TILE} = 2L tokens: 32 at 512 bits, 16 at 256, 8 at
 * 128; {@link Simd#L} float lanes). At 512 bits one pass: 16 accumulators, 8 broadcasts and 2
 * loads per 16 FMAs, which on AVX-512 runs at the FMA ports' rate. Below, with AVX2's 16
 * registers, two passes of 4 rows × 2 vectors ({@link #block4x2}). A last tile of one vector
 * (an odd number of token vectors) is 8 rows × 1 vector.
 *
 * <p>Numerics: the activations are quantized exactly as for the dot-product kernels (llama.cpp's
 * quantizers), and the weights decode to the reference values; only the order of the float
 * additions differs from ggml (products are rounded one by one instead of summed as integers per
 * block), a difference of the order of float rounding (1e-7 relative). Each output is the FMA
 * chain over {@code k} in order, whatever the tile shape, so all widths give the same bits.
 */
final class Gemm {
    private Gemm() {}

    /** Weight rows per panel. */
    static final int ROWS = 8;
    /** Tokens per vector ({@link Simd#L}: 16, 8 or 4); {@link Activations#tPad} is a multiple of it. */
    static final int TOKEN_GRAIN = VectorWidth.BITS == 0 ? 16 : VectorWidth.BITS / 32; // = Simd.L, read without loading the Vector API (MatMul reads this class's settings in any mode)

    /** Whether repacked matrices feed the GEMM from their copy ({@code -Dmodelopt.gemm.fromCopy}, default true) rather than from the file. */
    static final boolean FROM_COPY = Boolean.parseBoolean(System.getProperty("modelopt.gemm.fromCopy", "true"));
    /** Tokens per tile of the transposed activations ({@link Activations#xtIndex}): two vectors, 32, 16 or 8. */
    static final int TILE = 2 * TOKEN_GRAIN;
    /**
     * Rows decoded together (4 slices) before the token tiles pass over them: the slices (at most
     * 32 × cols floats, 720 KB at 5632 columns) and one token tile (as large) stay in a 2 MiB L2
     * together, each weight is decoded once per call, and each tile is read once per 32 rows.
     */
    static final int CHUNK_ROWS = 32;
    /**
     * Calls with at least this many tokens take the GEMM path (below it the per-token kernels
     * win). System property {@code modelopt.gemm.minTokens}: a large value keeps every call on the
     * per-token kernels, whose per-block integer sums follow llama.cpp more closely (at 3-4x the
     * prefill time).
     */
    static final int MIN_TOKENS = Math.max(1, Integer.getInteger("modelopt.gemm.minTokens", 16));

    /** Floats after the slices where a finished tile's accumulators are spilled (8 rows × {@link #TILE} tokens). */
    private static final int SPILL = ROWS * TILE;

    /**
     * Panel scratch of one thread: the decoder's output for 8 rows ({@code ROWS · cols} floats,
     * row-major), a chunk of {@link #CHUNK_ROWS} rows as slices, and the {@link #SPILL} floats.
     */
    static float[] panel(float[] current, int cols) {
        int need = (ROWS + CHUNK_ROWS) * cols + SPILL;
        return current != null && current.length >= need ? current : new float[need];
    }

    /**
     * Rows {@code [rowStart, rowEnd)} for all tokens. Whole blocks of {@link #ROWS} are decoded
     * by the format's kernel, a chunk at a time, into slices that every token tile passes over; the
     * last partial block goes through the format's own dot-product kernel.
     */
    static void compute(FormatKernel kernel, WeightMatrix w, Activations a, int rowStart, int rowEnd,
                        float[] out, int outOff, int outStride, float[] panel) {
        int cols = w.cols(), at = ROWS * cols, spill = (ROWS + CHUNK_ROWS) * cols;
        int r = rowStart;
        while (r + ROWS <= rowEnd) {
            int chunk = Math.min(CHUNK_ROWS, (rowEnd - r) / ROWS * ROWS);
            for (int s = 0; s < chunk; s += ROWS) {
                kernel.dequantizeRows(w, r + s, ROWS, panel);
                sliceRowMajor(panel, cols, at + s * cols);
            }
            tiles(panel, at, chunk, spill, cols, a, r, out, outOff, outStride);
            r += chunk;
        }
        if (r < rowEnd) kernel.compute(w, a, r, rowEnd, out, outOff, outStride);
    }

    /** Every token tile over the {@code rows / 8} slices at {@code p[at..]}, the first for weight row {@code r0}. */
    private static void tiles(float[] p, int at, int rows, int spill, int cols, Activations a, int r0, float[] out, int oo, int os) {
        int t = 0;
        for (; t + TILE <= a.tPad; t += TILE) {
            for (int s = 0; s < rows; s += ROWS) {
                if (Simd.L == 16) block8x2(p, at + s * cols, spill, cols, a, t, r0 + s, out, oo, os);
                else block4x2(p, at + s * cols, spill, cols, a, t, r0 + s, out, oo, os);
            }
        }
        if (t < a.tPad) {
            for (int s = 0; s < rows; s += ROWS) block8x1(p, at + s * cols, spill, cols, a, t, r0 + s, out, oo, os);
        }
    }

    /** Panel scratch for {@link #computePacked}: a whole group of rows as 8-row slices, plus the {@link #SPILL} floats. */
    static float[] packedPanel(float[] current, int groupRows, int cols) {
        int need = groupRows * cols + SPILL;
        return current != null && current.length >= need ? current : new float[need];
    }

    /**
     * Row groups {@code [g0, g1)} of a repacked matrix ({@link InterleavedQ4_0}, {@link InterleavedQ8_0})
     * for all tokens ({@code scales}: room for a group's scales as floats, {@code G · cols / 32}):
     * each group (G rows) is decoded once straight into G/8 slices (the same floats
     * as the reference decoder), and every token tile passes over the slices, so a tile's
     * activations serve G rows while they are in cache. The file's own blocks are not read.
     */
    static void computePacked(WeightMatrix w, Activations a, int g0, int g1, float[] out, int outOff, int outStride, float[] panel, float[] scales) {
        int cols = w.cols(), nb = cols / 32, rowsPerGroup = w.packedGroupRows();
        int spill = rowsPerGroup * cols;
        Repacking layout = w.repacking();
        for (int g = g0; g < g1; g++) {
            layout.decodeGroup(w.packed(), g, nb, panel, scales);
            tiles(panel, 0, rowsPerGroup, spill, cols, a, g * rowsPerGroup, out, outOff, outStride);
        }
    }

    /*
     * The micro-kernels read a slice: 8 rows with each column's 8 weights adjacent, weight (i, k) at
     * p[pb + 8k + i]. The constant stride is what lets the JIT hoist the array bounds checks out of
     * the k loop (with a stride only known at run time it checked every broadcast: ~3 extra scalar
     * instructions per FMA pair; the FMA ports were the limit either way, so the gain is in issue
     * slots, and the speed-up of this layout came from decoding straight into it).
     */

    /** Row-major {@code p[i·cols + k]} (8 rows) into the slice at {@code p[at..]}. */
    private static void sliceRowMajor(float[] p, int cols, int at) {
        for (int k = 0; k < cols; k++) {
            int o = at + ROWS * k;
            for (int i = 0; i < ROWS; i++) p[o + i] = p[i * cols + k];
        }
    }

    /**
     * The 8-row × {@code 2L}-token tile at 512 bits: slice at {@code p[pb..]}, tokens {@code [t0, t0 + 2L)};
     * {@code p[spill .. + 8·2L)} is scratch. 16 accumulators, 2 loads and 8 broadcasts per 16 FMAs.
     */
    private static void block8x2(float[] p, int pb, int spill, int cols, Activations a, int t0, int r0, float[] out, int oo, int os) {
        final int L = Simd.L, W = 2 * L;
        float[] xt = a.xt;
        int xb = t0 * cols; // the tile's stream (Activations.xtIndex)
        FloatVector c00 = FloatVector.zero(Simd.F), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        FloatVector c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
        for (int k = 0; k < cols; k++) {
            FloatVector x0 = FloatVector.fromArray(Simd.F, xt, xb + W * k), x1 = FloatVector.fromArray(Simd.F, xt, xb + W * k + L);
            int pk = pb + ROWS * k;
            FloatVector w = FloatVector.broadcast(Simd.F, p[pk]);
            c00 = w.fma(x0, c00);
            c01 = w.fma(x1, c01);
            w = FloatVector.broadcast(Simd.F, p[pk + 1]);
            c10 = w.fma(x0, c10);
            c11 = w.fma(x1, c11);
            w = FloatVector.broadcast(Simd.F, p[pk + 2]);
            c20 = w.fma(x0, c20);
            c21 = w.fma(x1, c21);
            w = FloatVector.broadcast(Simd.F, p[pk + 3]);
            c30 = w.fma(x0, c30);
            c31 = w.fma(x1, c31);
            w = FloatVector.broadcast(Simd.F, p[pk + 4]);
            c40 = w.fma(x0, c40);
            c41 = w.fma(x1, c41);
            w = FloatVector.broadcast(Simd.F, p[pk + 5]);
            c50 = w.fma(x0, c50);
            c51 = w.fma(x1, c51);
            w = FloatVector.broadcast(Simd.F, p[pk + 6]);
            c60 = w.fma(x0, c60);
            c61 = w.fma(x1, c61);
            w = FloatVector.broadcast(Simd.F, p[pk + 7]);
            c70 = w.fma(x0, c70);
            c71 = w.fma(x1, c71);
        }
        c00.intoArray(p, spill); c01.intoArray(p, spill + L); c10.intoArray(p, spill + W); c11.intoArray(p, spill + W + L);
        c20.intoArray(p, spill + 2 * W); c21.intoArray(p, spill + 2 * W + L); c30.intoArray(p, spill + 3 * W); c31.intoArray(p, spill + 3 * W + L);
        c40.intoArray(p, spill + 4 * W); c41.intoArray(p, spill + 4 * W + L); c50.intoArray(p, spill + 5 * W); c51.intoArray(p, spill + 5 * W + L);
        c60.intoArray(p, spill + 6 * W); c61.intoArray(p, spill + 6 * W + L); c70.intoArray(p, spill + 7 * W); c71.intoArray(p, spill + 7 * W + L);
        store(p, spill, W, out, oo, os, t0, r0, a.nTokens);
    }

    /**
     * The same tile below 512 bits, in two passes of 4 rows × 2 vectors: C2 loads a pass's
     * broadcasts up front, so 8 accumulators + 2 activation vectors + 4 broadcasts = 14 of AVX2's
     * 16 registers (8 × 2 would need 26 and 4 × 3 needs 19: accumulators spill to the stack, and 4 × 3
     * ran at 40 GFLOP/s on one Zen core from L1 against 65-78 for 4 × 2); 2 loads and 4 broadcasts per 8 FMAs. The second pass reads the
     * tile's activations again, from L1/L2.
     */
    private static void block4x2(float[] p, int pb, int spill, int cols, Activations a, int t0, int r0, float[] out, int oo, int os) {
        final int L = Simd.L, W = 2 * L;
        float[] xt = a.xt;
        int xb = t0 * cols;
        for (int h = 0; h < ROWS; h += 4) {
            int ph = pb + h, o = spill + h * W;
            FloatVector c00 = FloatVector.zero(Simd.F), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
            for (int k = 0; k < cols; k++) {
                int xk = xb + W * k;
                FloatVector x0 = FloatVector.fromArray(Simd.F, xt, xk), x1 = FloatVector.fromArray(Simd.F, xt, xk + L);
                int pk = ph + ROWS * k;
                FloatVector w = FloatVector.broadcast(Simd.F, p[pk]);
                c00 = w.fma(x0, c00);
                c01 = w.fma(x1, c01);
                w = FloatVector.broadcast(Simd.F, p[pk + 1]);
                c10 = w.fma(x0, c10);
                c11 = w.fma(x1, c11);
                w = FloatVector.broadcast(Simd.F, p[pk + 2]);
                c20 = w.fma(x0, c20);
                c21 = w.fma(x1, c21);
                w = FloatVector.broadcast(Simd.F, p[pk + 3]);
                c30 = w.fma(x0, c30);
                c31 = w.fma(x1, c31);
            }
            c00.intoArray(p, o); c01.intoArray(p, o + L);
            c10.intoArray(p, o + W); c11.intoArray(p, o + W + L);
            c20.intoArray(p, o + 2 * W); c21.intoArray(p, o + 2 * W + L);
            c30.intoArray(p, o + 3 * W); c31.intoArray(p, o + 3 * W + L);
        }
        store(p, spill, W, out, oo, os, t0, r0, a.nTokens);
    }

    /**
     * The 8-row × 1-vector tile: the last tile when {@code tPad} is an odd number of vectors of
     * tokens. 8 accumulators; C2 reuses two registers for the broadcasts, so it fits 16 registers too.
     */
    private static void block8x1(float[] p, int pb, int spill, int cols, Activations a, int t0, int r0, float[] out, int oo, int os) {
        final int L = Simd.L;
        float[] xt = a.xt;
        int xb = t0 * cols; // the tile's stream (Activations.xtIndex)
        FloatVector c0 = FloatVector.zero(Simd.F), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
        for (int k = 0; k < cols; k++) {
            FloatVector x0 = FloatVector.fromArray(Simd.F, xt, xb + L * k);
            int pk = pb + ROWS * k;
            c0 = FloatVector.broadcast(Simd.F, p[pk]).fma(x0, c0);
            c1 = FloatVector.broadcast(Simd.F, p[pk + 1]).fma(x0, c1);
            c2 = FloatVector.broadcast(Simd.F, p[pk + 2]).fma(x0, c2);
            c3 = FloatVector.broadcast(Simd.F, p[pk + 3]).fma(x0, c3);
            c4 = FloatVector.broadcast(Simd.F, p[pk + 4]).fma(x0, c4);
            c5 = FloatVector.broadcast(Simd.F, p[pk + 5]).fma(x0, c5);
            c6 = FloatVector.broadcast(Simd.F, p[pk + 6]).fma(x0, c6);
            c7 = FloatVector.broadcast(Simd.F, p[pk + 7]).fma(x0, c7);
        }
        c0.intoArray(p, spill); c1.intoArray(p, spill + L); c2.intoArray(p, spill + 2 * L); c3.intoArray(p, spill + 3 * L);
        c4.intoArray(p, spill + 4 * L); c5.intoArray(p, spill + 5 * L); c6.intoArray(p, spill + 6 * L); c7.intoArray(p, spill + 7 * L);
        store(p, spill, TOKEN_GRAIN, out, oo, os, t0, r0, a.nTokens);
    }

    /**
     * Writes a finished tile spilled at {@code p[spill..]} (row {@code i}, token {@code l} at
     * {@code spill + i·width + l}) token by token: each token's 8 results are adjacent in {@code out}.
     * Padding tokens (from {@code n}) are skipped. Writing row by row instead (16 calls per tile,
     * each storing 16 values a row of {@code out} apart) took 8.7% of a small125m prefill.
     */
    private static void store(float[] p, int spill, int width, float[] out, int oo, int os, int t0, int r0, int n) {
        int end = Math.min(width, n - t0);
        for (int l = 0; l < end; l++) {
            int o = oo + (t0 + l) * os + r0, q = spill + l;
            out[o] = p[q];
            out[o + 1] = p[q + width];
            out[o + 2] = p[q + 2 * width];
            out[o + 3] = p[q + 3 * width];
            out[o + 4] = p[q + 4 * width];
            out[o + 5] = p[q + 5 * width];
            out[o + 6] = p[q + 6 * width];
            out[o + 7] = p[q + 7 * width];
        }
    }
}
