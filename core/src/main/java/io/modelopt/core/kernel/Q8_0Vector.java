package io.modelopt.core.kernel;

import io.modelopt.core.quant.Q8_0;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * {@link Q8_0#quantizeActivations} with the Vector API, bit for bit the same quants and scales (tested
 * against it): a block is {@link Simd#PER_BLOCK} vectors (two at 512 bits), every operation lane-wise
 * or a maximum, so all widths give the same bits. The scalar form ran at about 5 ns per element
 * (a double {@code rint} and a clamp per element), a tenth of a 128-token GEMM call's time.
 *
 * <p>Rounding: {@code (p + 1.5·2²³) - 1.5·2²³} is {@code rint(p)} (round half to even) for
 * {@code |p| < 2²²}, and here {@code |p| ≤ 127·(1 + 2⁻²³)}; it yields {@code +0} for small negative
 * {@code p}, as the scalar {@code + 0f} does.
 */
final class Q8_0Vector {
    private Q8_0Vector() {}

    private static final float ROUND = 0x1.8p23f;

    static void quantizeActivations(float[] src, int off, int n, float[] q, int qOff, float[] d, int dOff) {
        if (n % Q8_0.BLOCK_ELEMENTS != 0) {
            Q8_0.quantizeActivations(src, off, n, q, qOff, d, dOff);   // throws the same error
            return;
        }
        final int L = Simd.L;
        for (int b = 0; b < n / Q8_0.BLOCK_ELEMENTS; b++) {
            int x = off + 32 * b, qo = qOff + 32 * b;
            // the block's PER_BLOCK vectors (2 at 512 bits): |v| lane-wise maxima, in order
            FloatVector m = FloatVector.fromArray(Simd.F, src, x).abs();
            for (int j = 1; j < Simd.PER_BLOCK; j++) m = m.max(FloatVector.fromArray(Simd.F, src, x + j * L).abs());
            // false for NaN as well as for the infinities
            if (!m.compare(VectorOperators.LT, Float.POSITIVE_INFINITY).allTrue()) {
                d[dOff + b] = Float.NaN;
                java.util.Arrays.fill(q, qo, qo + 32, 0f);
                continue;
            }
            float amax = m.reduceLanes(VectorOperators.MAX);
            d[dOff + b] = Float.float16ToFloat(Float.floatToFloat16(amax / 127.f));
            float id = amax != 0.0f ? 127.f / amax : 0.0f;
            for (int j = 0; j < Simd.PER_BLOCK; j++) {
                FloatVector.fromArray(Simd.F, src, x + j * L).mul(id).add(ROUND).sub(ROUND).max(-128f).min(127f).intoArray(q, qo + j * L);
            }
        }
    }
}
