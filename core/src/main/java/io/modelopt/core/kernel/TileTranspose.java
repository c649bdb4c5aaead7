package io.modelopt.core.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;

/**
 * A 16×16 block of dequantized activations written transposed into the GEMM's token tiles
 * ({@link Activations#xtIndex}), in registers: 16 row loads (one token's 16 columns each, times
 * its block scale), four butterfly stages of two-input permutations ({@code vpermt2ps}), 16 column
 * stores of 16 tokens. The scalar loop it replaces stored every element on its own, 32 floats
 * apart (4% of a 128-token small125m prefill). Only loaded with the vector kernels.
 *
 * <p>Stage {@code s} (8, 4, 2, 1) exchanges the off-diagonal {@code s}-blocks of rows {@code i} and
 * {@code i + s}: {@code a'[l] = l & s ? b[l ^ s] : a[l]}, {@code b'[l] = l & s ? b[l] : a[l ^ s]};
 * after the four stages row {@code j} holds column {@code j}. Every value is moved, none computed,
 * so the result is the scalar loop's bit for bit.
 */
final class TileTranspose {
    private TileTranspose() {}

    private static final VectorShuffle<Float> A8 = VectorShuffle.fromOp(Simd.F, l -> (l & 8) == 0 ? l : (l ^ 8) + 16);
    private static final VectorShuffle<Float> B8 = VectorShuffle.fromOp(Simd.F, l -> (l & 8) == 0 ? (l ^ 8) : l + 16);
    private static final VectorShuffle<Float> A4 = VectorShuffle.fromOp(Simd.F, l -> (l & 4) == 0 ? l : (l ^ 4) + 16);
    private static final VectorShuffle<Float> B4 = VectorShuffle.fromOp(Simd.F, l -> (l & 4) == 0 ? (l ^ 4) : l + 16);
    private static final VectorShuffle<Float> A2 = VectorShuffle.fromOp(Simd.F, l -> (l & 2) == 0 ? l : (l ^ 2) + 16);
    private static final VectorShuffle<Float> B2 = VectorShuffle.fromOp(Simd.F, l -> (l & 2) == 0 ? (l ^ 2) : l + 16);
    private static final VectorShuffle<Float> A1 = VectorShuffle.fromOp(Simd.F, l -> (l & 1) == 0 ? l : (l ^ 1) + 16);
    private static final VectorShuffle<Float> B1 = VectorShuffle.fromOp(Simd.F, l -> (l & 1) == 0 ? (l ^ 1) : l + 16);

    /**
     * Tokens {@code i < 16} at rows {@code q[qBase + i·cols ..]} (16 columns), scaled by
     * {@code d[dBase + i·dStride]}, stored as column {@code j} at {@code xt[oBase + j·w ..]} (16 tokens).
     */
    static void block16(float[] q, int qBase, int cols, float[] d, int dBase, int dStride, float[] xt, int oBase, int w) {
        FloatVector v0 = FloatVector.fromArray(Simd.F, q, qBase + 0 * cols).mul(d[dBase + 0 * dStride]);
        FloatVector v1 = FloatVector.fromArray(Simd.F, q, qBase + 1 * cols).mul(d[dBase + 1 * dStride]);
        FloatVector v2 = FloatVector.fromArray(Simd.F, q, qBase + 2 * cols).mul(d[dBase + 2 * dStride]);
        FloatVector v3 = FloatVector.fromArray(Simd.F, q, qBase + 3 * cols).mul(d[dBase + 3 * dStride]);
        FloatVector v4 = FloatVector.fromArray(Simd.F, q, qBase + 4 * cols).mul(d[dBase + 4 * dStride]);
        FloatVector v5 = FloatVector.fromArray(Simd.F, q, qBase + 5 * cols).mul(d[dBase + 5 * dStride]);
        FloatVector v6 = FloatVector.fromArray(Simd.F, q, qBase + 6 * cols).mul(d[dBase + 6 * dStride]);
        FloatVector v7 = FloatVector.fromArray(Simd.F, q, qBase + 7 * cols).mul(d[dBase + 7 * dStride]);
        FloatVector v8 = FloatVector.fromArray(Simd.F, q, qBase + 8 * cols).mul(d[dBase + 8 * dStride]);
        FloatVector v9 = FloatVector.fromArray(Simd.F, q, qBase + 9 * cols).mul(d[dBase + 9 * dStride]);
        FloatVector v10 = FloatVector.fromArray(Simd.F, q, qBase + 10 * cols).mul(d[dBase + 10 * dStride]);
        FloatVector v11 = FloatVector.fromArray(Simd.F, q, qBase + 11 * cols).mul(d[dBase + 11 * dStride]);
        FloatVector v12 = FloatVector.fromArray(Simd.F, q, qBase + 12 * cols).mul(d[dBase + 12 * dStride]);
        FloatVector v13 = FloatVector.fromArray(Simd.F, q, qBase + 13 * cols).mul(d[dBase + 13 * dStride]);
        FloatVector v14 = FloatVector.fromArray(Simd.F, q, qBase + 14 * cols).mul(d[dBase + 14 * dStride]);
        FloatVector v15 = FloatVector.fromArray(Simd.F, q, qBase + 15 * cols).mul(d[dBase + 15 * dStride]);
        { // stage 8
            FloatVector n0 = v0.rearrange(A8, v8), n8 = v0.rearrange(B8, v8);
            FloatVector n1 = v1.rearrange(A8, v9), n9 = v1.rearrange(B8, v9);
            FloatVector n2 = v2.rearrange(A8, v10), n10 = v2.rearrange(B8, v10);
            FloatVector n3 = v3.rearrange(A8, v11), n11 = v3.rearrange(B8, v11);
            FloatVector n4 = v4.rearrange(A8, v12), n12 = v4.rearrange(B8, v12);
            FloatVector n5 = v5.rearrange(A8, v13), n13 = v5.rearrange(B8, v13);
            FloatVector n6 = v6.rearrange(A8, v14), n14 = v6.rearrange(B8, v14);
            FloatVector n7 = v7.rearrange(A8, v15), n15 = v7.rearrange(B8, v15);
            v0 = n0; v1 = n1; v2 = n2; v3 = n3;
            v4 = n4; v5 = n5; v6 = n6; v7 = n7;
            v8 = n8; v9 = n9; v10 = n10; v11 = n11;
            v12 = n12; v13 = n13; v14 = n14; v15 = n15;
        }
        { // stage 4
            FloatVector n0 = v0.rearrange(A4, v4), n4 = v0.rearrange(B4, v4);
            FloatVector n1 = v1.rearrange(A4, v5), n5 = v1.rearrange(B4, v5);
            FloatVector n2 = v2.rearrange(A4, v6), n6 = v2.rearrange(B4, v6);
            FloatVector n3 = v3.rearrange(A4, v7), n7 = v3.rearrange(B4, v7);
            FloatVector n8 = v8.rearrange(A4, v12), n12 = v8.rearrange(B4, v12);
            FloatVector n9 = v9.rearrange(A4, v13), n13 = v9.rearrange(B4, v13);
            FloatVector n10 = v10.rearrange(A4, v14), n14 = v10.rearrange(B4, v14);
            FloatVector n11 = v11.rearrange(A4, v15), n15 = v11.rearrange(B4, v15);
            v0 = n0; v1 = n1; v2 = n2; v3 = n3;
            v4 = n4; v5 = n5; v6 = n6; v7 = n7;
            v8 = n8; v9 = n9; v10 = n10; v11 = n11;
            v12 = n12; v13 = n13; v14 = n14; v15 = n15;
        }
        { // stage 2
            FloatVector n0 = v0.rearrange(A2, v2), n2 = v0.rearrange(B2, v2);
            FloatVector n1 = v1.rearrange(A2, v3), n3 = v1.rearrange(B2, v3);
            FloatVector n4 = v4.rearrange(A2, v6), n6 = v4.rearrange(B2, v6);
            FloatVector n5 = v5.rearrange(A2, v7), n7 = v5.rearrange(B2, v7);
            FloatVector n8 = v8.rearrange(A2, v10), n10 = v8.rearrange(B2, v10);
            FloatVector n9 = v9.rearrange(A2, v11), n11 = v9.rearrange(B2, v11);
            FloatVector n12 = v12.rearrange(A2, v14), n14 = v12.rearrange(B2, v14);
            FloatVector n13 = v13.rearrange(A2, v15), n15 = v13.rearrange(B2, v15);
            v0 = n0; v1 = n1; v2 = n2; v3 = n3;
            v4 = n4; v5 = n5; v6 = n6; v7 = n7;
            v8 = n8; v9 = n9; v10 = n10; v11 = n11;
            v12 = n12; v13 = n13; v14 = n14; v15 = n15;
        }
        { // stage 1
            FloatVector n0 = v0.rearrange(A1, v1), n1 = v0.rearrange(B1, v1);
            FloatVector n2 = v2.rearrange(A1, v3), n3 = v2.rearrange(B1, v3);
            FloatVector n4 = v4.rearrange(A1, v5), n5 = v4.rearrange(B1, v5);
            FloatVector n6 = v6.rearrange(A1, v7), n7 = v6.rearrange(B1, v7);
            FloatVector n8 = v8.rearrange(A1, v9), n9 = v8.rearrange(B1, v9);
            FloatVector n10 = v10.rearrange(A1, v11), n11 = v10.rearrange(B1, v11);
            FloatVector n12 = v12.rearrange(A1, v13), n13 = v12.rearrange(B1, v13);
            FloatVector n14 = v14.rearrange(A1, v15), n15 = v14.rearrange(B1, v15);
            v0 = n0; v1 = n1; v2 = n2; v3 = n3;
            v4 = n4; v5 = n5; v6 = n6; v7 = n7;
            v8 = n8; v9 = n9; v10 = n10; v11 = n11;
            v12 = n12; v13 = n13; v14 = n14; v15 = n15;
        }
        v0.intoArray(xt, oBase + 0 * w);
        v1.intoArray(xt, oBase + 1 * w);
        v2.intoArray(xt, oBase + 2 * w);
        v3.intoArray(xt, oBase + 3 * w);
        v4.intoArray(xt, oBase + 4 * w);
        v5.intoArray(xt, oBase + 5 * w);
        v6.intoArray(xt, oBase + 6 * w);
        v7.intoArray(xt, oBase + 7 * w);
        v8.intoArray(xt, oBase + 8 * w);
        v9.intoArray(xt, oBase + 9 * w);
        v10.intoArray(xt, oBase + 10 * w);
        v11.intoArray(xt, oBase + 11 * w);
        v12.intoArray(xt, oBase + 12 * w);
        v13.intoArray(xt, oBase + 13 * w);
        v14.intoArray(xt, oBase + 14 * w);
        v15.intoArray(xt, oBase + 15 * w);
    }
}
