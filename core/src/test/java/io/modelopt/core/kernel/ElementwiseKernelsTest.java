package io.modelopt.core.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.modelopt.core.model.Rope;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.RopeScaling;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * RmsNorm, Softmax, SwiGlu, Rope and the attention kernel, scalar and Vector API, against float64
 * references on sizes that hit every vector head/tail path (llama.cpp's test-quantize-fns sizes),
 * with deterministic data {@code 0.1 + a·cos(i + offset)}.
 */
class ElementwiseKernelsTest {
    private static final int[] SIZES = {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 63, 67, 127, 129, 193, 255, 1023};

    static Stream<Arguments> modesAndSizes() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KernelMode m : KernelMode.values()) for (int n : SIZES) b.add(Arguments.of(m, n));
        return b.build();
    }

    private static void assumeMode(KernelMode m) {
        assumeTrue(m == KernelMode.SCALAR || KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
    }

    static float[] data(int n, double amplitude, double offset) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (0.1 + amplitude * Math.cos(i + offset));
        return a;
    }

    @ParameterizedTest @MethodSource("modesAndSizes")
    void rmsNormMatchesFloat64(KernelMode mode, int n) {
        assumeMode(mode);
        float[] x = data(n + 3, 2.5, 0.3), w = data(n, 1.0, 1.7);
        float eps = 1e-5f;
        float[] out = new float[n + 5];
        RmsNorm.apply(mode, x, 3, w, eps, out, 5, n);
        double ss = 0;
        for (int i = 0; i < n; i++) ss += (double) x[3 + i] * x[3 + i];
        double scale = 1 / Math.sqrt(ss / n + eps);
        for (int i = 0; i < n; i++) {
            double ref = x[3 + i] * scale * w[i];
            assertEquals(ref, out[5 + i], 2e-6 * Math.max(1, Math.abs(ref)), "element " + i);
        }
    }

    @ParameterizedTest @MethodSource("modesAndSizes")
    void rmsNormInPlace(KernelMode mode, int n) {
        assumeMode(mode);
        float[] x = data(n, 1.5, 0.9), w = data(n, 0.5, 0.2), copy = x.clone(), expected = new float[n];
        RmsNorm.apply(mode, copy, 0, w, 1e-6f, expected, 0, n);
        RmsNorm.apply(mode, x, 0, w, 1e-6f, x, 0, n);
        for (int i = 0; i < n; i++) assertEquals(expected[i], x[i], 0f);
    }

    @ParameterizedTest @MethodSource("modesAndSizes")
    void softmaxMatchesFloat64(KernelMode mode, int n) {
        assumeMode(mode);
        float[] x = data(n + 2, 12.0, 0.7);
        double[] ref = new double[n];
        double max = Double.NEGATIVE_INFINITY, sum = 0;
        for (int i = 0; i < n; i++) max = Math.max(max, x[2 + i]);
        for (int i = 0; i < n; i++) sum += ref[i] = Math.exp(x[2 + i] - max);
        Softmax.apply(mode, x, 2, n);
        double total = 0;
        for (int i = 0; i < n; i++) {
            assertEquals(ref[i] / sum, x[2 + i], 1e-6 * Math.max(ref[i] / sum, 1e-3), "element " + i);
            total += x[2 + i];
        }
        assertEquals(1.0, total, 1e-5);
    }

    @ParameterizedTest @MethodSource("modesAndSizes")
    void swigluMatchesFloat64(KernelMode mode, int n) {
        assumeMode(mode);
        float[] g = data(n + 1, 6.0, 0.1), u = data(n + 4, 2.0, 2.2), orig = g.clone();
        SwiGlu.apply(mode, g, 1, u, 4, n);
        for (int i = 0; i < n; i++) {
            double gi = orig[1 + i];
            double ref = gi / (1 + Math.exp(-gi)) * u[4 + i];
            assertEquals(ref, g[1 + i], 2e-6 * Math.max(1, Math.abs(ref)), "element " + i);
        }
    }

    @Test
    void nanPropagates() {
        for (KernelMode mode : KernelMode.values()) {
            if (mode == KernelMode.VECTOR && !KernelMode.vectorApiAvailable()) continue;
            for (int n : new int[] {3, 17, 67}) {
                float[] x = data(n, 1, 0);
                x[n / 2] = Float.NaN;
                float[] out = new float[n];
                RmsNorm.apply(mode, x, 0, data(n, 1, 1), 1e-5f, out, 0, n);
                for (float f : out) assertTrue(Float.isNaN(f), mode + " rmsnorm n=" + n);
                float[] s = x.clone();
                Softmax.apply(mode, s, 0, n);
                for (float f : s) assertTrue(Float.isNaN(f), mode + " softmax n=" + n);
                float[] g = x.clone();
                SwiGlu.apply(mode, g, 0, data(n, 1, 2), 0, n);
                assertTrue(Float.isNaN(g[n / 2]), mode + " swiglu n=" + n);
            }
        }
    }

    @Test
    void softmaxOfMaskedEntriesIsZero() {
        for (KernelMode mode : KernelMode.values()) {
            if (mode == KernelMode.VECTOR && !KernelMode.vectorApiAvailable()) continue;
            float[] x = data(40, 3, 0);
            for (int i = 20; i < 40; i++) x[i] = Float.NEGATIVE_INFINITY;
            Softmax.apply(mode, x, 0, 40);
            for (int i = 20; i < 40; i++) assertEquals(0f, x[i]);
        }
    }

    // ---------------- ggml's expf ----------------

    @Test
    void ggmlExpIsWithinItsDocumentedErrorAndHandlesTheEdges() {
        for (float x = -103.9f; x < 88.3f; x += 0.0137f) {
            double exact = Math.exp(x);
            float got = GgmlExp.expf(x);
            assertEquals(exact, got, 2.5 * Math.ulp((float) exact), "expf(" + x + ")");   // documented: 1.45 ulp + 0.5 ulp
        }
        assertEquals(1f, GgmlExp.expf(0f));
        assertEquals(Float.POSITIVE_INFINITY, GgmlExp.expf(Float.POSITIVE_INFINITY));
        assertEquals(0f, GgmlExp.expf(Float.NEGATIVE_INFINITY));
        assertEquals(Float.POSITIVE_INFINITY, GgmlExp.expf(89f));
        assertEquals(0f, GgmlExp.expf(-200f));
        assertTrue(Float.isNaN(GgmlExp.expf(Float.NaN)));
        float sub = GgmlExp.expf(-100f);   // a subnormal result, rounded once
        assertEquals(Math.exp(-100), sub, 2.0 * Float.MIN_VALUE);
    }

    @Test
    void vectorExpSoftmaxAndSwigluAreBitIdenticalToScalar() {
        assumeTrue(KernelMode.vectorApiAvailable(), "Vector API not in this JVM");
        for (int n : SIZES) {
            float[] x = data(n, 40.0, 0.3), a = x.clone(), b = x.clone();
            Softmax.apply(KernelMode.SCALAR, a, 0, n);
            Softmax.apply(KernelMode.VECTOR, b, 0, n);
            for (int i = 0; i < n; i++) assertEquals(Float.floatToIntBits(a[i]), Float.floatToIntBits(b[i]), "softmax n=" + n + " i=" + i);
            float[] up = data(n, 2, 1), g1 = data(n, 9, 0.5), g2 = g1.clone();
            SwiGlu.apply(KernelMode.SCALAR, g1, 0, up, 0, n);
            SwiGlu.apply(KernelMode.VECTOR, g2, 0, up, 0, n);
            for (int i = 0; i < n; i++) assertEquals(Float.floatToIntBits(g1[i]), Float.floatToIntBits(g2[i]), "swiglu n=" + n + " i=" + i);
        }
    }

    @Test
    void transposedAttentionMatchesFloat64AndIsModeIndependent() {
        int headDim = 32, n = 37, kvHeads = 2, kvDim = kvHeads * headDim, head = 1;
        float[] kT = new float[kvDim * n], v = new float[n * kvDim];
        double[][] kRef = new double[n][headDim], vRef = new double[n][headDim];
        for (int p = 0; p < n; p++) {
            float[] kr = data(kvDim, 1.2, p * 0.37), vr = data(kvDim, 0.8, p * 1.1 + 5);
            for (int c = 0; c < kvDim; c++) {
                kT[c * n + p] = kr[c];
                v[p * kvDim + c] = vr[c];
            }
            for (int i = 0; i < headDim; i++) {
                kRef[p][i] = kr[head * headDim + i];
                vRef[p][i] = vr[head * headDim + i];
            }
        }
        float[] q = data(headDim, 2.0, 0.9);
        float scale = (float) (1 / Math.sqrt(headDim));
        float[][] outs = new float[2][headDim];
        for (KernelMode mode : KernelMode.values()) {
            if (mode == KernelMode.VECTOR && !KernelMode.vectorApiAvailable()) continue;
            AttentionKernel.attendTransposed(mode, q, 0, headDim, scale, kT, head * headDim * n, n, v, head * headDim, kvDim, n, false,
                    new float[n], outs[mode.ordinal()], 0);
        }
        double[] s = new double[n];
        double max = Double.NEGATIVE_INFINITY, sum = 0;
        for (int p = 0; p < n; p++) {
            for (int i = 0; i < headDim; i++) s[p] += q[i] * kRef[p][i];
            s[p] *= scale;
            max = Math.max(max, s[p]);
        }
        for (int p = 0; p < n; p++) sum += s[p] = Math.exp(s[p] - max);
        for (int i = 0; i < headDim; i++) {
            double ref = 0;
            for (int p = 0; p < n; p++) ref += s[p] / sum * vRef[p][i];
            assertEquals(ref, outs[0][i], 2e-6, "scalar element " + i);
            if (KernelMode.vectorApiAvailable()) assertEquals(outs[0][i], outs[1][i], 0f, "vector element " + i);
        }
    }

    // ---------------- RoPE ----------------

    /**
     * Rope computes its angles in float as llama.cpp does (see {@link Rope}); against the exact
     * double angles that costs at most a few float ulps of the angle: 1e-5 at position 37.
     */
    @Test
    void ropeRotatesBothConventionsAsFloat64Reference() {
        int headDim = 64, heads = 3, pos = 37;
        double theta = 10000;
        Rope rope = new Rope(headDim, theta, null, null);
        float[] cos = new float[headDim / 2], sin = new float[headDim / 2];
        rope.cosSin(pos, cos, sin, 0);
        for (RopeConvention conv : RopeConvention.values()) {
            float[] x = data(heads * headDim + 2, 1.3, 0.4), orig = x.clone();
            Rope.rotate(conv, x, 2, heads, headDim, cos, sin, 0);
            for (int h = 0; h < heads; h++) {
                for (int i = 0; i < headDim / 2; i++) {
                    int a = conv == RopeConvention.ADJACENT_PAIRS ? 2 * i : i;
                    int b = conv == RopeConvention.ADJACENT_PAIRS ? 2 * i + 1 : i + headDim / 2;
                    double angle = pos * Math.pow(theta, -2.0 * i / headDim);
                    double x0 = orig[2 + h * headDim + a], x1 = orig[2 + h * headDim + b];
                    assertEquals(x0 * Math.cos(angle) - x1 * Math.sin(angle), x[2 + h * headDim + a], 1e-5, conv + " head " + h + " pair " + i);
                    assertEquals(x0 * Math.sin(angle) + x1 * Math.cos(angle), x[2 + h * headDim + b], 1e-5, conv + " head " + h + " pair " + i);
                }
            }
            assertEquals(orig[0], x[0]);
            assertEquals(orig[1], x[1]);
        }
    }

    @Test
    void ropeConventionsAgreeUnderTheConverterPermutation() {
        // llama.cpp's converter moves HF element (j·half + i) to GGUF element (2i + j) within each head.
        int headDim = 16, half = 8;
        Rope rope = new Rope(headDim, 500000, null, null);
        float[] cos = new float[half], sin = new float[half];
        rope.cosSin(1234, cos, sin, 0);
        float[] hf = data(headDim, 1, 0.5), gguf = new float[headDim];
        for (int i = 0; i < half; i++) for (int j = 0; j < 2; j++) gguf[2 * i + j] = hf[j * half + i];
        Rope.rotate(RopeConvention.ROTATE_HALF, hf, 0, 1, headDim, cos, sin, 0);
        Rope.rotate(RopeConvention.ADJACENT_PAIRS, gguf, 0, 1, headDim, cos, sin, 0);
        for (int i = 0; i < half; i++) for (int j = 0; j < 2; j++) assertEquals(hf[j * half + i], gguf[2 * i + j], 0f);
    }

    @Test
    void llama3ScalingMatchesTransformersFormula() {
        // Llama 3.1 8B: theta 500000, factor 8, low 1, high 4, original 8192, headDim 128.
        RopeScaling s = new RopeScaling("llama3", 8, 1, 4, 8192);
        Rope rope = new Rope(128, 500000, s, null);
        float[] factors = new float[64];
        for (int i = 0; i < 64; i++) {
            double base = Math.pow(500000, -2.0 * i / 128);
            double wavelen = 2 * Math.PI / base;
            double expected;
            if (wavelen < 8192 / 4.0) expected = base;
            else if (wavelen > 8192 / 1.0) expected = base / 8;
            else {
                double smooth = (8192 / wavelen - 1) / (4 - 1);
                expected = (1 - smooth) * base / 8 + smooth * base;
            }
            assertEquals(expected, rope.inverseFrequency(i), 1e-7 * expected, "pair " + i);   // divisors are stored as float, like rope_freqs
            factors[i] = (float) (base / expected);
        }
        // The GGUF form (rope_freqs.weight divisors) gives the same frequencies.
        Rope fromFactors = new Rope(128, 500000, null, factors);
        for (int i = 0; i < 64; i++) assertEquals(rope.inverseFrequency(i), fromFactors.inverseFrequency(i), 1e-6 * rope.inverseFrequency(i));
        assertEquals(Math.pow(500000, -2.0 * 63 / 128) / 8, rope.inverseFrequency(63), 1e-7 * rope.inverseFrequency(63));
        assertEquals(1.0, rope.inverseFrequency(0), 0);
    }

    @Test
    void angleIsAccumulatedInFloatAsGgmlDoes() {
        // ggml_rope_cache_init: theta = p; per pair: cos(theta), sin(theta); theta *= powf(base, -2/n_dims)
        int headDim = 32, pos = 1000;
        Rope rope = new Rope(headDim, 10000, null, null);
        float[] cos = new float[16], sin = new float[16];
        rope.cosSin(pos, cos, sin, 0);
        float thetaScale = (float) Math.pow(10000f, -2.0f / headDim), theta = pos;
        for (int i = 0; i < 16; i++) {
            assertEquals((float) Math.cos(theta), cos[i], 0f, "pair " + i);
            assertEquals((float) Math.sin(theta), sin[i], 0f, "pair " + i);
            assertEquals(Math.cos(pos * Math.pow(10000, -2.0 * i / headDim)), cos[i], 2e-4, "pair " + i + " vs the exact angle");
            theta *= thetaScale;
        }
    }

    @Test
    void linearScalingDividesPositions() {
        Rope plain = new Rope(8, 10000, null, null), linear = new Rope(8, 10000, RopeScaling.linear(4), null);
        float[] c1 = new float[4], s1 = new float[4], c2 = new float[4], s2 = new float[4];
        plain.cosSin(10, c1, s1, 0);
        linear.cosSin(40, c2, s2, 0);
        for (int i = 0; i < 4; i++) {
            assertEquals(c1[i], c2[i], 1e-7);
            assertEquals(s1[i], s2[i], 1e-7);
        }
    }

    @Test
    void unsupportedScalingIsNamed() {
        var e = assertThrows(UnsupportedOperationException.class, () -> new Rope(8, 10000, new RopeScaling("yarn", 4, 0, 0, 4096), null));
        assertTrue(e.getMessage().contains("yarn"), e.getMessage());
    }

    // ---------------- attention ----------------

    static Stream<Arguments> attentionCases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KernelMode m : KernelMode.values())
            for (GgmlType t : new GgmlType[] {GgmlType.F32, GgmlType.F16})
                for (int headDim : new int[] {8, 12, 17, 32, 40, 64, 128})
                    for (int n : new int[] {1, 3, 33, 2 * AttentionKernel.ROW_CHUNK + 3})
                        for (int heads : new int[] {1, 3})
                            for (int layout = 0; layout < 3; layout++) b.add(Arguments.of(m, t, headDim, n, heads, layout));
        return b.build();
    }

    /**
     * Several query heads sharing one KV head, over more positions than one conversion chunk, in a
     * cache laid out as {@link io.modelopt.core.kv.KvCache} describes (each head's entries by slot)
     * with three slot orders: scrambled (no two positions adjacent), blocks of 16 in reverse order
     * (as a paged cache), and contiguous.
     */
    @ParameterizedTest @MethodSource("attentionCases")
    void attentionMatchesFloat64(KernelMode mode, GgmlType type, int headDim, int n, int heads, int layout) {
        assumeMode(mode);
        int kvHeads = 2, bytes = type.typeSize();
        var f32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        var f16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        int slots = n + 16, blocks = (n + 15) / 16;
        long entryBytes = (long) headDim * bytes, headStride = slots * entryBytes;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment keys = arena.allocate(kvHeads * headStride), values = arena.allocate(kvHeads * headStride);
            double[][] kRef = new double[n][headDim], vRef = new double[n][headDim];
            long[] offs = new long[n];
            int head = 1;
            for (int p = 0; p < n; p++) {
                int slot = switch (layout) {
                    case 0 -> (p * 7 + 3) % (n + 5); // n + 5 is coprime with 7 for the n tested
                    case 1 -> (blocks - 1 - p / 16) * 16 + p % 16;
                    default -> p + 2;
                };
                offs[p] = slot * entryBytes;
                int rowElems = kvHeads * headDim;
                float[] kr = data(rowElems, 1.2, p * 0.37), vr = data(rowElems, 0.8, p * 1.1 + 5);
                for (int i = 0; i < rowElems; i++) {
                    long off = offs[p] + i / headDim * headStride + (long) (i % headDim) * bytes;
                    if (type == GgmlType.F32) {
                        keys.set(f32, off, kr[i]);
                        values.set(f32, off, vr[i]);
                    } else {
                        keys.set(f16, off, Float.floatToFloat16(kr[i]));
                        values.set(f16, off, Float.floatToFloat16(vr[i]));
                    }
                }
                for (int i = 0; i < headDim; i++) {
                    int e = head * headDim + i;
                    kRef[p][i] = type == GgmlType.F32 ? kr[e] : Float.float16ToFloat(Float.floatToFloat16(kr[e]));
                    vRef[p][i] = type == GgmlType.F32 ? vr[e] : Float.float16ToFloat(Float.floatToFloat16(vr[e]));
                }
            }
            float[] q = data(heads * headDim + 3, 2.0, 0.9);
            float scale = (float) (1 / Math.sqrt(headDim));
            int stride = n + 1;
            float[] scores = new float[heads * stride], out = new float[heads * headDim + 2];
            AttentionKernel.attend(mode, q, 3, heads, headDim, scale, keys, values, type, offs, head * headStride, n,
                    scores, stride, new float[AttentionKernel.rowScratch(headDim)], out, 2);
            for (int h = 0; h < heads; h++) {
                assertHeadMatches(q, 3 + h * headDim, headDim, kRef, vRef, n, type, out, 2 + h * headDim);
            }
        }
    }

    private static void assertHeadMatches(float[] q, int qOff, int headDim, double[][] kRef, double[][] vRef, int n, GgmlType type,
                                          float[] out, int outOff) {
        double[] s = new double[n];
        double max = Double.NEGATIVE_INFINITY, sum = 0;
        for (int p = 0; p < n; p++) {
            double d = 0;
            for (int i = 0; i < headDim; i++) d += q[qOff + i] * kRef[p][i];
            s[p] = d / Math.sqrt(headDim);
            max = Math.max(max, s[p]);
        }
        for (int p = 0; p < n; p++) sum += s[p] = Math.exp(s[p] - max);
        // with an F16 cache the weights are rounded to F16 before they multiply the values (as llama.cpp)
        // A weight within 1e-5 (relative) of an F16 rounding midpoint may round either way from the
        // kernel's float softmax: such weights widen the tolerance by their two roundings' difference.
        double[] weight = new double[n], ambiguity = new double[n];
        for (int p = 0; p < n; p++) {
            weight[p] = s[p] / sum;
            if (type == GgmlType.F16) {
                float lo = Float.float16ToFloat(Float.floatToFloat16((float) (weight[p] * (1 - 1e-5))));
                float hi = Float.float16ToFloat(Float.floatToFloat16((float) (weight[p] * (1 + 1e-5))));
                ambiguity[p] = hi - lo;
                weight[p] = Float.float16ToFloat(Float.floatToFloat16((float) weight[p]));
            }
        }
        for (int i = 0; i < headDim; i++) {
            double ref = 0, tolerance = 2e-6;
            for (int p = 0; p < n; p++) {
                ref += weight[p] * vRef[p][i];
                tolerance += ambiguity[p] * Math.abs(vRef[p][i]);
            }
            assertEquals(ref, out[outOff + i], tolerance, "element " + i);
        }
    }

    @Test
    void attentionRejectsQuantizedCache() {
        assertThrows(IllegalArgumentException.class, () -> AttentionKernel.attend(KernelMode.SCALAR, new float[8], 0, 1, 8, 1f,
                MemorySegment.NULL, MemorySegment.NULL, GgmlType.Q8_0, new long[1], 0, 1, new float[1], 1, new float[0], new float[8], 0));
    }
}
