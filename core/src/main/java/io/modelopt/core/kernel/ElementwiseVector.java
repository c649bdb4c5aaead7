package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Vector API bodies of the element-wise kernels ({@link RmsNorm}, {@link Softmax},
 * {@link SwiGlu}, {@link AttentionKernel}). Kept in one class that the public kernels only touch
 * when their mode is {@link KernelMode#VECTOR}, so a JVM without {@code jdk.incubator.vector}
 * never loads it. Every loop has the same two phases: a vector body up to
 * {@code SPECIES.loopBound(n)} and a scalar tail, so any length works.
 *
 * <p>Results must not depend on whether the JIT has compiled a method yet: the Vector API lets
 * {@code reduceLanes(ADD)} and {@code lanewise(EXP)} differ between the intrinsic and the Java
 * fallback (a tree vs a sequential sum, SVML vs {@code Math.exp}), so a run's logits would change
 * with warm-up. Sums are therefore reduced lane by lane in a fixed order ({@link #sumLanes}) and
 * exponentials are left to the scalar {@code Math.exp}, which every JIT tier computes identically.
 */
final class ElementwiseVector {
    private ElementwiseVector() {}

    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    private static final int LANES = SPECIES.length();

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

    /** Σ q[qOff+i] · seg[f32 at byteOff + 4i]. */
    static float dotF32(float[] q, int qOff, MemorySegment seg, long byteOff, int n) {
        FloatVector acc = FloatVector.zero(SPECIES);
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector k = FloatVector.fromMemorySegment(SPECIES, seg, byteOff + 4L * i, ByteOrder.LITTLE_ENDIAN);
            acc = k.fma(FloatVector.fromArray(SPECIES, q, qOff + i), acc);
        }
        float s = sumLanes(acc);
        for (; i < n; i++) s += q[qOff + i] * seg.get(AttentionKernel.F32, byteOff + 4L * i);
        return s;
    }

    /** out[outOff+i] += a · seg[f32 at byteOff + 4i]. */
    static void axpyF32(float a, MemorySegment seg, long byteOff, float[] out, int outOff, int n) {
        FloatVector va = FloatVector.broadcast(SPECIES, a);
        int i = 0;
        for (int bound = SPECIES.loopBound(n); i < bound; i += LANES) {
            FloatVector v = FloatVector.fromMemorySegment(SPECIES, seg, byteOff + 4L * i, ByteOrder.LITTLE_ENDIAN);
            v.fma(va, FloatVector.fromArray(SPECIES, out, outOff + i)).intoArray(out, outOff + i);
        }
        for (; i < n; i++) out[outOff + i] += a * seg.get(AttentionKernel.F32, byteOff + 4L * i);
    }

    /** Σ of the lanes, lane 0 first: the same value whether or not the JIT has intrinsified the code. */
    static float sumLanes(FloatVector v) {
        float s = 0;
        for (int l = 0; l < LANES; l++) s += v.lane(l);
        return s;
    }
}
