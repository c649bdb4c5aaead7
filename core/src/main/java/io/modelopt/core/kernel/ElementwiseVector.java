package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Vector API bodies of the element-wise kernels ({@link RmsNorm}, {@link Softmax},
 * {@link SwiGlu}, {@link AttentionKernel}). Kept in one class that the public kernels only touch
 * when their mode is {@link KernelMode#VECTOR}, so a JVM without {@code jdk.incubator.vector}
 * never loads it. Every loop has a vector body up to {@code SPECIES.loopBound(n)} and then either
 * a scalar tail or one masked vector, so any length works.
 *
 * <p>Results must not depend on whether the JIT has compiled a method yet: the Vector API lets
 * {@code reduceLanes(ADD)} and {@code lanewise(EXP)} differ between the intrinsic and the Java
 * fallback (a tree vs a sequential sum, SVML vs {@code Math.exp}), so a run's logits would change
 * with warm-up. Sums are therefore reduced lane by lane in a fixed order (lane 0 first, written out where needed) and
 * exponentials are {@link GgmlExp}'s polynomial of FMAs (in {@link #expShift} and {@link #siluMul}), which every tier computes
 * identically, lane for lane equal to {@link GgmlExp#expf}. The polynomial is written out in both
 * loops on purpose: as a helper taking a {@code FloatVector} it was once compiled on its own, was
 * then no longer inlined, and boxed every vector (~200 KB per decode token).
 */
final class ElementwiseVector {
    private ElementwiseVector() {}

    /** The process's float species ({@link Simd#F}: 16, 8 or 4 lanes); every loop below is written for any of them. */
    static final VectorSpecies<Float> SPECIES = Simd.F;
    private static final int LANES = Simd.L;

    /** out[i] = (x[i] · scale) · w[i]. */
    static void scaleMul(float[] x, int xOff, float scale, float[] w, float[] out, int outOff, int n) {
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector v = FloatVector.fromArray(SPECIES, x, xOff + i).mul(scale);
            v.mul(FloatVector.fromArray(SPECIES, w, i)).intoArray(out, outOff + i);
        }
        for (; i < n; i++) out[outOff + i] = (x[xOff + i] * scale) * w[i];
    }

    /** max of x[off .. off+n); NaN if any element is NaN. */
    static float max(float[] x, int off, int n) {
        FloatVector acc = FloatVector.broadcast(SPECIES, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            acc = acc.lanewise(VectorOperators.MAX, FloatVector.fromArray(SPECIES, x, off + i));
        }
        float m = acc.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) m = Math.max(m, x[off + i]);
        return m;
    }

    /** x[i] *= f. */
    static void scale(float[] x, int off, int n, float f) {
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector.fromArray(SPECIES, x, off + i).mul(f).intoArray(x, off + i);
        }
        for (; i < n; i++) x[off + i] *= f;
    }

    /**
     * scores[sOff + p] = scale · (q · rows[p·headDim ..]) for p < m: per position an FMA chain over
     * the whole vectors ({@link Simd#L} lanes) of the head dimension, the lanes summed pairwise in
     * a fixed order ({@link Simd}), then the remaining elements in order. (One chain per position:
     * the positions' chains are independent, so they overlap in the core.)
     */
    static void rowScores(float[] q, int qOff, float[] rows, int headDim, int m, float scale, float[] scores, int sOff) {
        final int L = Simd.L;
        int vecEnd = headDim & ~(L - 1);
        for (int p = 0; p < m; p++) {
            int r = p * headDim;
            FloatVector acc = FloatVector.zero(Simd.F);
            for (int d = 0; d < vecEnd; d += L) {
                acc = FloatVector.fromArray(Simd.F, rows, r + d).fma(FloatVector.fromArray(Simd.F, q, qOff + d), acc);
            }
            if (Simd.L > 8) acc = acc.add(acc.rearrange(Simd.SWAP8));
            if (Simd.L > 4) acc = acc.add(acc.rearrange(Simd.SWAP4));
            acc = acc.add(acc.rearrange(Simd.SWAP2));
            acc = acc.add(acc.rearrange(Simd.SWAP1));
            float s = acc.lane(0);
            for (int d = vecEnd; d < headDim; d++) s = Math.fma(q[qOff + d], rows[r + d], s);
            scores[sOff + p] = s * scale;
        }
    }

    // GgmlExp.expf on every lane is written out in each loop below rather than in a helper taking a
    // FloatVector: once such a helper has been compiled on its own (it is large), the JIT no longer
    // inlines it ("already compiled into a big method") and every call boxes its vectors, which
    // showed as ~200 KB of garbage per decode token under JMH -prof gc.

    /** x[i] = expf(x[i] - max) for i in [off, off+n) ({@link GgmlExp#expf}). */
    static void expShift(float[] x, int off, int n, float max) {
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector v = FloatVector.fromArray(SPECIES, x, off + i).sub(max);
            {
                FloatVector z = v.fma(GgmlExp.LOG2E, GgmlExp.SHIFT);
                FloatVector r = z.sub(GgmlExp.SHIFT);
                FloatVector nn = r.neg();
                FloatVector b = nn.fma(FloatVector.broadcast(SPECIES, GgmlExp.LN2_LO), nn.fma(FloatVector.broadcast(SPECIES, GgmlExp.LN2_HI), v));
                FloatVector u = b.mul(b);
                FloatVector j = b.fma(GgmlExp.C5, GgmlExp.C4).fma(u, b.fma(GgmlExp.C3, GgmlExp.C2)).fma(u, b.fma(GgmlExp.C1, 1.0f));
                IntVector ni = (IntVector) r.convert(VectorOperators.F2I, 0);
                IntVector a = ni.max(-100).min(100);
                IntVector bb = ni.sub(a);
                FloatVector e = j.mul(a.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats()).mul(bb.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats());
                VectorMask<Float> big = r.abs().compare(VectorOperators.GT, 192f);
                if (big.anyTrue()) e = e.blend(FloatVector.zero(SPECIES).blend(Float.POSITIVE_INFINITY, r.compare(VectorOperators.GT, 0f)), big);
                e.intoArray(x, off + i);
            }
        }
        for (; i < n; i++) x[off + i] = GgmlExp.expf(x[off + i] - max);
    }

    /** gate[i] = silu(gate[i]) · up[i] for i in [0, n) with {@link GgmlExp#silu}. */
    static void siluMul(float[] gate, int gOff, float[] up, int uOff, int n) {
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector g = FloatVector.fromArray(SPECIES, gate, gOff + i);
            FloatVector v = FloatVector.zero(SPECIES).sub(g);
            {
                FloatVector z = v.fma(GgmlExp.LOG2E, GgmlExp.SHIFT);
                FloatVector r = z.sub(GgmlExp.SHIFT);
                FloatVector nn = r.neg();
                FloatVector b = nn.fma(FloatVector.broadcast(SPECIES, GgmlExp.LN2_LO), nn.fma(FloatVector.broadcast(SPECIES, GgmlExp.LN2_HI), v));
                FloatVector u = b.mul(b);
                FloatVector j = b.fma(GgmlExp.C5, GgmlExp.C4).fma(u, b.fma(GgmlExp.C3, GgmlExp.C2)).fma(u, b.fma(GgmlExp.C1, 1.0f));
                IntVector ni = (IntVector) r.convert(VectorOperators.F2I, 0);
                IntVector a = ni.max(-100).min(100);
                IntVector bb = ni.sub(a);
                FloatVector e = j.mul(a.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats()).mul(bb.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats());
                VectorMask<Float> big = r.abs().compare(VectorOperators.GT, 192f);
                if (big.anyTrue()) e = e.blend(FloatVector.zero(SPECIES).blend(Float.POSITIVE_INFINITY, r.compare(VectorOperators.GT, 0f)), big);
                FloatVector s = g.div(e.add(1.0f));
                s.mul(FloatVector.fromArray(SPECIES, up, uOff + i)).intoArray(gate, gOff + i);
            }
        }
        for (; i < n; i++) gate[gOff + i] = GgmlExp.silu(gate[gOff + i]) * up[uOff + i];
    }

    /**
     * scores[p] = scale · Σ_d q[d]·kT[base + d·stride + p] for p < n: an FMA chain over d in order
     * per lane, the same as the scalar loop's; the last, partial vector of positions masked.
     */
    static void transposedScores(float[] q, int qOff, int headDim, float[] kT, int base, int stride, int n, float scale, float[] scores) {
        int p = 0;
        for (int bound = SPECIES.loopBound(n); p < bound; p += LANES) {
            FloatVector acc = FloatVector.zero(SPECIES);
            for (int d = 0; d < headDim; d++) {
                acc = FloatVector.fromArray(SPECIES, kT, base + d * stride + p).fma(FloatVector.broadcast(SPECIES, q[qOff + d]), acc);
            }
            acc.mul(scale).intoArray(scores, p);
        }
        if (p < n) { // the last, partial vector: masked loads and stores, the same chain per lane
            VectorMask<Float> m = SPECIES.indexInRange(p, n);
            FloatVector acc = FloatVector.zero(SPECIES);
            for (int d = 0; d < headDim; d++) {
                acc = FloatVector.fromArray(SPECIES, kT, base + d * stride + p, m).fma(FloatVector.broadcast(SPECIES, q[qOff + d]), acc);
            }
            acc.mul(scale).intoArray(scores, p, m);
        }
    }

    /**
     * out[outOff + d] = Σ_p w[wOff + p]·v[vBase + p·vStride + d] (an FMA chain over p in order,
     * starting from 0, or from the current {@code out} when {@code accumulate}) for the columns of
     * whole vectors; returns the first column left for the scalar tail. The accumulators stay in
     * registers across all positions, two vectors at a time.
     */
    static int weightedSum(float[] w, int wOff, int n, float[] v, int vBase, int vStride, int cols, float[] out, int outOff, boolean accumulate) {
        int d = 0;
        for (; d + 2 * LANES <= cols; d += 2 * LANES) {
            FloatVector acc0 = accumulate ? FloatVector.fromArray(SPECIES, out, outOff + d) : FloatVector.zero(SPECIES);
            FloatVector acc1 = accumulate ? FloatVector.fromArray(SPECIES, out, outOff + d + LANES) : FloatVector.zero(SPECIES);
            for (int p = 0; p < n; p++) {
                FloatVector wp = FloatVector.broadcast(SPECIES, w[wOff + p]);
                int off = vBase + p * vStride + d;
                acc0 = FloatVector.fromArray(SPECIES, v, off).fma(wp, acc0);
                acc1 = FloatVector.fromArray(SPECIES, v, off + LANES).fma(wp, acc1);
            }
            acc0.intoArray(out, outOff + d);
            acc1.intoArray(out, outOff + d + LANES);
        }
        for (; d + LANES <= cols; d += LANES) {
            FloatVector acc = accumulate ? FloatVector.fromArray(SPECIES, out, outOff + d) : FloatVector.zero(SPECIES);
            for (int p = 0; p < n; p++) {
                acc = FloatVector.fromArray(SPECIES, v, vBase + p * vStride + d).fma(FloatVector.broadcast(SPECIES, w[wOff + p]), acc);
            }
            acc.intoArray(out, outOff + d);
        }
        return d;
    }


    /**
     * {@link #transposedScores} for four queries at {@code qOffs[0..3]} over the same keys, scores
     * of query {@code i} at {@code scores[i·stride + p]}: one key vector load per four FMAs.
     */
    static void transposedScores4(float[] q, int[] qOffs, int headDim, float[] kT, int base, int stride, int n, float scale,
                                 float[] scores, int scoreStride) {
        int q0 = qOffs[0], q1 = qOffs[1], q2 = qOffs[2], q3 = qOffs[3];
        int p = 0;
        // two vectors of positions at a time: eight FMA chains keep both FMA ports busy (four
        // chains of 4-cycle FMAs allow one per cycle), and each query broadcast serves two FMAs
        for (int bound = SPECIES.loopBound(n) - LANES; p < bound; p += 2 * LANES) {
            FloatVector a0 = FloatVector.zero(SPECIES), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            for (int d = 0; d < headDim; d++) {
                int ko = base + d * stride + p;
                FloatVector k = FloatVector.fromArray(SPECIES, kT, ko), k2 = FloatVector.fromArray(SPECIES, kT, ko + LANES);
                FloatVector x = FloatVector.broadcast(SPECIES, q[q0 + d]);
                a0 = k.fma(x, a0);
                b0 = k2.fma(x, b0);
                x = FloatVector.broadcast(SPECIES, q[q1 + d]);
                a1 = k.fma(x, a1);
                b1 = k2.fma(x, b1);
                x = FloatVector.broadcast(SPECIES, q[q2 + d]);
                a2 = k.fma(x, a2);
                b2 = k2.fma(x, b2);
                x = FloatVector.broadcast(SPECIES, q[q3 + d]);
                a3 = k.fma(x, a3);
                b3 = k2.fma(x, b3);
            }
            a0.mul(scale).intoArray(scores, p);
            b0.mul(scale).intoArray(scores, p + LANES);
            a1.mul(scale).intoArray(scores, scoreStride + p);
            b1.mul(scale).intoArray(scores, scoreStride + p + LANES);
            a2.mul(scale).intoArray(scores, 2 * scoreStride + p);
            b2.mul(scale).intoArray(scores, 2 * scoreStride + p + LANES);
            a3.mul(scale).intoArray(scores, 3 * scoreStride + p);
            b3.mul(scale).intoArray(scores, 3 * scoreStride + p + LANES);
        }
        for (int bound = SPECIES.loopBound(n); p < bound; p += LANES) {
            FloatVector a0 = FloatVector.zero(SPECIES), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0; d < headDim; d++) {
                FloatVector k = FloatVector.fromArray(SPECIES, kT, base + d * stride + p);
                a0 = k.fma(FloatVector.broadcast(SPECIES, q[q0 + d]), a0);
                a1 = k.fma(FloatVector.broadcast(SPECIES, q[q1 + d]), a1);
                a2 = k.fma(FloatVector.broadcast(SPECIES, q[q2 + d]), a2);
                a3 = k.fma(FloatVector.broadcast(SPECIES, q[q3 + d]), a3);
            }
            a0.mul(scale).intoArray(scores, p);
            a1.mul(scale).intoArray(scores, scoreStride + p);
            a2.mul(scale).intoArray(scores, 2 * scoreStride + p);
            a3.mul(scale).intoArray(scores, 3 * scoreStride + p);
        }
        if (p < n) { // the last, partial vector (a scalar tail of up to L - 1 positions × headDim cost more than the rest at short lengths)
            VectorMask<Float> m = SPECIES.indexInRange(p, n);
            FloatVector a0 = FloatVector.zero(SPECIES), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0; d < headDim; d++) {
                FloatVector k = FloatVector.fromArray(SPECIES, kT, base + d * stride + p, m);
                a0 = k.fma(FloatVector.broadcast(SPECIES, q[q0 + d]), a0);
                a1 = k.fma(FloatVector.broadcast(SPECIES, q[q1 + d]), a1);
                a2 = k.fma(FloatVector.broadcast(SPECIES, q[q2 + d]), a2);
                a3 = k.fma(FloatVector.broadcast(SPECIES, q[q3 + d]), a3);
            }
            a0.mul(scale).intoArray(scores, p, m);
            a1.mul(scale).intoArray(scores, scoreStride + p, m);
            a2.mul(scale).intoArray(scores, 2 * scoreStride + p, m);
            a3.mul(scale).intoArray(scores, 3 * scoreStride + p, m);
        }
    }

    /**
     * {@link #weightedSum} for four weight rows ({@code w[i·wStride + p]}, {@code p < n}) over the
     * same values, into {@code out[outOffs[i] + d]}; {@code cols} a multiple of {@code 2·LANES}.
     * Each output lane is the FMA chain over p in order, from 0, as in {@link #weightedSum}.
     */
    static void weightedSum4(float[] w, int wStride, int n, float[] v, int vBase, int vStride, int cols, float[] out, int[] outOffs) {
        for (int d = 0; d + 2 * LANES <= cols; d += 2 * LANES) {
            FloatVector a00 = FloatVector.zero(SPECIES), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
            for (int p = 0; p < n; p++) {
                int off = vBase + p * vStride + d;
                FloatVector v0 = FloatVector.fromArray(SPECIES, v, off), v1 = FloatVector.fromArray(SPECIES, v, off + LANES);
                FloatVector x = FloatVector.broadcast(SPECIES, w[p]);
                a00 = v0.fma(x, a00);
                a01 = v1.fma(x, a01);
                x = FloatVector.broadcast(SPECIES, w[wStride + p]);
                a10 = v0.fma(x, a10);
                a11 = v1.fma(x, a11);
                x = FloatVector.broadcast(SPECIES, w[2 * wStride + p]);
                a20 = v0.fma(x, a20);
                a21 = v1.fma(x, a21);
                x = FloatVector.broadcast(SPECIES, w[3 * wStride + p]);
                a30 = v0.fma(x, a30);
                a31 = v1.fma(x, a31);
            }
            a00.intoArray(out, outOffs[0] + d);
            a01.intoArray(out, outOffs[0] + d + LANES);
            a10.intoArray(out, outOffs[1] + d);
            a11.intoArray(out, outOffs[1] + d + LANES);
            a20.intoArray(out, outOffs[2] + d);
            a21.intoArray(out, outOffs[2] + d + LANES);
            a30.intoArray(out, outOffs[3] + d);
            a31.intoArray(out, outOffs[3] + d + LANES);
        }
    }
}
