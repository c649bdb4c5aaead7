package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.quant.Q8_K;

/**
 * The activations of one matmul call in the form the weight format's dot product reads, kept in
 * reusable scratch arrays (grown, never shrunk) so that a steady-state call allocates nothing.
 *
 * <ul>
 *   <li>{@link Kind#F32}: nothing is copied; kernels read {@code x[xOff + t*xStride + k]}.
 *   <li>{@link Kind#Q8_0}: llama.cpp's x86 {@code quantize_row_q8_0} per token; quants as exact
 *       integer floats in {@code q[t*cols + k]}, half-rounded scales in {@code d[t*blocks + b]}
 *   <li>{@link Kind#Q8_1}: the same quants and scales plus, for the Q4_1 dot product
 *       ({@code block_q8_1}), {@code s[t*blocks + b] = half(d·Σq)}.
 *   <li>{@link Kind#Q8_K}: {@code quantize_row_q8_K}; quants in {@code q}, float scales in
 *       {@code d[t*blocks + b]}, sums of 16 quants in {@code bsums[t*cols/16 + j]}.
 * </ul>
 */
public final class Activations {
    /** The forms a format's kernel can ask for ({@link FormatKernel#activations()}). */
    public enum Kind { F32, Q8_0, Q8_1, Q8_K }

    Kind kind;
    boolean vector;
    int nTokens, cols;
    float[] x;
    int xOff, xStride;

    float[] q = new float[0];
    float[] d = new float[0];
    float[] s = new float[0];
    int[] bsums = new int[0];

    /** Blocks per token row of the quantized forms. */
    int blocks;

    /**
     * For the repacked Q4_0 kernel ({@link InterleavedQ4_0}), with {@link Kind#Q8_0}: per block
     * {@code b} and line pair {@code s}, the four multipliers of the shifted views of a packed lane,
     * {@code q4Multipliers[t*cols/2 + 16b + 4s + j]} = {@code y_j} in the low and {@code y_(j+4)} in
     * the high 16 bits (the kernel's "Arithmetic" explains them), and {@code -8·Σq} of each block in
     * the low 16 bits of {@code q4Neg8[t*blocks + b]} (it fits: |Σq| ≤ 32·127).
     */
    boolean packedQ4;
    int[] q4Multipliers = new int[0];
    int[] q4Neg8 = new int[0];

    /**
     * For the one-token kernel of re-encoded F16 weights ({@link RebiasedF16}), with {@link Kind#F32}
     * and one token: the activations times {@code 2^102} in {@code f16Scaled[0 .. cols)}, even and
     * odd columns of each 32 apart ({@link RebiasedF16#permuteActivations}), and whether
     * that scaling was exact for all of them ({@code f16ScaledExact}: false when some {@code |x| ≥ 2^25}
     * or is not finite, and the kernel then takes its unscaled path).
     */
    /**
     * For the repacked k-quant kernels, with {@link Kind#Q8_K}: the form their inner loop reads
     * ({@link Repacking#multipliers}; null when the call wants none), and each token's
     * multipliers, {@code kForm.perToken(cols)} ints per token, token {@code t} at {@code t · perToken}.
     */
    KQuantMultipliers kForm;
    int[] kMultipliers = new int[0];

    /** Asks {@link #quantize} for a repacked k-quant kernel's multipliers too (after {@code prepare}); null for none. */
    void prepareKMultipliers(KQuantMultipliers form) {
        kForm = form;
        if (form != null) kMultipliers = grow(kMultipliers, form.perToken(cols) * nTokens);
    }

    boolean scaleForF16;
    float[] f16Scaled = new float[0];
    boolean f16ScaledExact;

    /**
     * For the prefill GEMM ({@link Gemm}): the activations as the dot products see them
     * (quantized values times their scale, or the F32 values), transposed to
     * tiles of {@link Gemm#TILE} tokens: token {@code t} of column {@code k} is at
     * {@link #xtIndex}{@code (k, t)} = {@code t0·cols + k·W + (t - t0)} with {@code t0} its tile's
     * first token and {@code W} the tile's width ({@link Gemm#TILE}, or less for a last partial
     * tile: a multiple of {@link Gemm#TOKEN_GRAIN}, the float lanes of a vector), so that one
     * vector holds {@code TOKEN_GRAIN} tokens of one column and each tile is one contiguous stream;
     * tokens from {@code nTokens} to {@code tPad} (a multiple of {@code TOKEN_GRAIN}) are zero.
     */
    boolean transposed;
    float[] xt = new float[0];
    int tPad;

    /** Records the call's activations and sizes the scratch; {@link #quantize} then fills a token range. */
    void prepare(Kind kind, float[] x, int xOff, int xStride, int nTokens, int cols, boolean transposed) {
        prepare(kind, x, xOff, xStride, nTokens, cols, transposed, false);
    }

    void prepare(Kind kind, float[] x, int xOff, int xStride, int nTokens, int cols, boolean transposed, boolean packedQ4) {
        prepare(kind, x, xOff, xStride, nTokens, cols, transposed, packedQ4, false);
    }

    void prepare(Kind kind, float[] x, int xOff, int xStride, int nTokens, int cols, boolean transposed, boolean packedQ4, boolean vector) {
        prepare(kind, x, xOff, xStride, nTokens, cols, transposed, packedQ4, vector, false);
    }

    /**
     * {@code vector}: quantize Q8_0 activations with {@link Q8_0Vector} (the same values, faster);
     * {@code scaleForF16}: fill {@link #f16Scaled} (one F32 token only).
     */
    void prepare(Kind kind, float[] x, int xOff, int xStride, int nTokens, int cols, boolean transposed, boolean packedQ4, boolean vector,
                 boolean scaleForF16) {
        this.vector = vector;
        if (packedQ4 && kind != Kind.Q8_0) throw new IllegalArgumentException("packed Q4_0 activations are Q8_0, not " + kind);
        if (scaleForF16 && (kind != Kind.F32 || nTokens != 1)) {
            throw new IllegalArgumentException("scaled F16 activations are one F32 token, not " + nTokens + " " + kind);
        }
        this.scaleForF16 = scaleForF16;
        if (scaleForF16) f16Scaled = grow(f16Scaled, cols);
        this.kind = kind;
        this.packedQ4 = packedQ4;
        this.transposed = transposed;
        this.x = x;
        this.xOff = xOff;
        this.xStride = xStride;
        this.nTokens = nTokens;
        this.cols = cols;
        switch (kind) {
            case F32 -> blocks = 0;
            case Q8_0, Q8_1 -> {
                blocks = cols / Q8_0.BLOCK_ELEMENTS;
                q = grow(q, nTokens * cols);
                d = grow(d, nTokens * blocks);
                s = grow(s, nTokens * blocks);
            }
            case Q8_K -> {
                blocks = cols / Q8_K.BLOCK_ELEMENTS;
                q = grow(q, nTokens * cols);
                d = grow(d, nTokens * blocks);
                bsums = grow(bsums, nTokens * (cols / 16));
            }
        }
        if (packedQ4) {
            q4Multipliers = grow(q4Multipliers, nTokens * cols / 2);
            q4Neg8 = grow(q4Neg8, nTokens * blocks);
        }
        if (transposed) {
            tPad = (nTokens + Gemm.TOKEN_GRAIN - 1) / Gemm.TOKEN_GRAIN * Gemm.TOKEN_GRAIN;
            xt = grow(xt, cols * tPad);
            for (int k = 0; k < cols; k++) {
                for (int t = nTokens; t < tPad; t++) xt[xtIndex(k, t)] = 0;
            }
        }
    }

    /** Quantizes tokens {@code [t0, t1)}; independent per token, so callers may split the range over threads. */
    void quantize(int t0, int t1) {
        for (int t = t0; t < t1; t++) {
            int src = xOff + t * xStride;
            switch (kind) {
                case F32 -> { }
                case Q8_0 -> {
                    if (vector) Q8_0Vector.quantizeActivations(x, src, cols, q, t * cols, d, t * blocks);
                    else Q8_0.quantizeActivations(x, src, cols, q, t * cols, d, t * blocks);
                }
                case Q8_1 -> {
                    Q8_0.quantizeActivations(x, src, cols, q, t * cols, d, t * blocks);
                    for (int b = 0; b < blocks; b++) {
                        int sum = 0;
                        for (int j = 0; j < 32; j++) sum += (int) q[t * cols + b * 32 + j];
                        // block_q8_1.s as the x86 quantize_row_q8_1 stores it: half(d * Σq) with d not yet rounded.
                        s[t * blocks + b] = Float.float16ToFloat(Float.floatToFloat16(q8_1UnroundedD(src + b * 32) * sum));
                    }
                }
                case Q8_K -> Q8_K.quantizeActivations(x, src, cols, q, t * cols, d, t * blocks, bsums, t * (cols / 16));
            }
        }
        if (packedQ4) {
            // y_k = x_k - 16·x_(k-1) over each lane's nibbles (InterleavedQ4_0, "Arithmetic"); vector only, as is the kernel
            for (int t = t0; t < t1; t++) {
                for (int b = 0; b < blocks; b++) {
                    q4Neg8[t * blocks + b] = InterleavedQ4_0.multipliers(q, t * cols + 32 * b, q4Multipliers, t * cols / 2 + 16 * b);
                }
            }
        }
        if (kForm != null) {
            int per = kForm.perToken(cols);
            for (int t = t0; t < t1; t++) kForm.write(q, t * cols, cols, kMultipliers, t * per);
        }
        if (scaleForF16 && t0 == 0 && t1 > 0) scaleForF16();
        if (transposed) transpose(t0, t1);
    }

    /** Fills {@link #f16Scaled} from token 0 and records whether every value scaled exactly. */
    private void scaleForF16() {
        f16ScaledExact = RebiasedF16.permuteActivations(x, xOff, cols, f16Scaled);
    }

    /** Where token {@code t} of column {@code k} is in {@link #xt}. */
    int xtIndex(int k, int t) {
        int t0 = t / Gemm.TILE * Gemm.TILE, w = Math.min(Gemm.TILE, tPad - t0);
        return t0 * cols + k * w + (t - t0);
    }

    /**
     * Fills {@code xt} for tokens {@code [t0, t1)} in blocks of 32 columns: each token's 32 values
     * are read contiguously and written down its tile (32 cache lines that stay in L1 for the
     * block). Reading column by column instead touched a new line of {@code q} per element (the
     * tokens are {@code cols} bytes apart), 12% of a 128-token GEMM's time.
     */
    private void transpose(int t0, int t1) {
        for (int tb = t0; tb < t1; ) {
            int tile = tb / Gemm.TILE * Gemm.TILE, w = Math.min(Gemm.TILE, tPad - tile), te = Math.min(t1, tile + Gemm.TILE);
            for (int k0 = 0; k0 < cols; k0 += 32) {
                int ke = Math.min(cols, k0 + 32);
                for (int t = tb; t < te; t++) {
                    int o = tile * cols + (t - tile);
                    switch (kind) {
                        case F32 -> {
                            int src = xOff + t * xStride;
                            for (int k = k0; k < ke; k++) xt[o + k * w] = x[src + k];
                        }
                        case Q8_0, Q8_1, Q8_K -> {
                            // a 32-column block lies inside one quantization block (32 or 256 columns)
                            float scale = d[t * blocks + k0 / (kind == Kind.Q8_K ? Q8_K.BLOCK_ELEMENTS : Q8_0.BLOCK_ELEMENTS)];
                            int src = t * cols;
                            for (int k = k0; k < ke; k++) xt[o + k * w] = q[src + k] * scale;
                        }
                    }
                }
            }
            tb = te;
        }
    }

    /** The unrounded {@code amax / 127} of a 32-element block (NaN if the block is not finite). */
    private float q8_1UnroundedD(int at) {
        float amax = 0;
        for (int j = 0; j < 32; j++) {
            float v = x[at + j];
            if (!Float.isFinite(v)) return Float.NaN;
            amax = Math.max(amax, Math.abs(v));
        }
        return amax / 127.f;
    }

    private static float[] grow(float[] a, int n) {
        return a.length >= n ? a : new float[Math.max(n, a.length + a.length / 2)];
    }

    private static int[] grow(int[] a, int n) {
        return a.length >= n ? a : new int[Math.max(n, a.length + a.length / 2)];
    }

    // ---- read access for kernels outside this package (formats registered by other modules) ----

    /** The form these activations are in. */
    public Kind kind() { return kind; }

    /** Tokens of the call. */
    public int tokens() { return nTokens; }

    /** Elements per token (the weight's columns). */
    public int columns() { return cols; }

    /** The call's input floats: token {@code t}'s row starts at {@link #inputOffset}{@code (t)} (every kind). */
    public float[] input() { return x; }

    /** Where token {@code t}'s input row starts in {@link #input()}. */
    public int inputOffset(int t) { return xOff + t * xStride; }

    /** Q8 kinds: the quantized values as exact integer floats, token {@code t}'s at {@code t · columns()}. */
    public float[] quants() { return q; }

    /** Q8 kinds: the block scales, token {@code t}'s block {@code b} at {@code t · blocks() + b}. */
    public float[] blockScales() { return d; }

    /** Q8 kinds: blocks per token. */
    public int blocks() { return blocks; }
}
