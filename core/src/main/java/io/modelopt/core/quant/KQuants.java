package io.modelopt.core.quant;

import java.lang.foreign.MemorySegment;

/** Helpers shared by the k-quant super-block formats (256 elements): the 6-bit scale packing and ggml's quant searches. */
final class KQuants {
    private KQuants() {}

    /** Elements per super-block ({@code QK_K}). */
    static final int QK_K = 256;
    /** Bytes of packed 6-bit scales and mins in Q4_K/Q5_K ({@code K_SCALE_SIZE}). */
    static final int K_SCALE_SIZE = 12;

    /**
     * ggml's {@code get_scale_min_k4}: sub-block {@code j} (0..7) scale and min, 6 bits each,
     * from the 12 packed bytes at {@code scales}. Returns {@code scale | min << 8}.
     */
    static int scaleMinK4(int j, MemorySegment s, long scales) {
        int sc, m;
        if (j < 4) {
            sc = LittleEndian.u8(s, scales + j) & 63;
            m = LittleEndian.u8(s, scales + j + 4) & 63;
        } else {
            sc = (LittleEndian.u8(s, scales + j + 4) & 0xF) | ((LittleEndian.u8(s, scales + j - 4) >>> 6) << 4);
            m = (LittleEndian.u8(s, scales + j + 4) >>> 4) | ((LittleEndian.u8(s, scales + j) >>> 6) << 4);
        }
        return sc | (m << 8);
    }

    /** Same as {@link #scaleMinK4} on a byte array. */
    static int scaleMinK4(int j, byte[] q) {
        int sc, m;
        if (j < 4) {
            sc = q[j] & 63;
            m = q[j + 4] & 63;
        } else {
            sc = (q[j + 4] & 0xF) | (((q[j - 4] & 0xFF) >>> 6) << 4);
            m = ((q[j + 4] & 0xFF) >>> 4) | (((q[j] & 0xFF) >>> 6) << 4);
        }
        return sc | (m << 8);
    }

    /**
     * ggml's {@code make_qkx2_quants}: scale and (negated) min of an asymmetric {@code nmax+1}
     * level quantization of {@code x[xo..xo+n)} minimizing the weighted error over a small
     * search of scales. Writes the levels to {@code L[lo..)} and {@code -min} to {@code theMin[mo]}.
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int xo, float[] weights, byte[] L, int lo,
                                float[] theMin, int mo, byte[] laux, float rmin, float rdelta, int nstep, boolean useMad) {
        float min = x[xo], max = x[xo];
        float sumW = weights[0];
        float sumX = sumW * x[xo];
        for (int i = 1; i < n; ++i) {
            if (x[xo + i] < min) min = x[xo + i];
            if (x[xo + i] > max) max = x[xo + i];
            float w = weights[i];
            sumW += w;
            sumX += w * x[xo + i];
        }
        if (min > 0) min = 0;
        if (max == min) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            theMin[mo] = -min;
            return 0.f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestMad = 0;
        for (int i = 0; i < n; ++i) {
            int l = GgmlRounding.nearestInt(iscale * (x[xo + i] - min));
            L[lo + i] = (byte) Math.max(0, Math.min(nmax, l));
            float diff = scale * L[lo + i] + min - x[xo + i];
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestMad += weights[i] * diff;
        }
        if (nstep < 1) {
            theMin[mo] = -min;
            return scale;
        }
        for (int is = 0; is <= nstep; ++is) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0, sumL2 = 0, sumXl = 0;
            for (int i = 0; i < n; ++i) {
                int l = GgmlRounding.nearestInt(iscale * (x[xo + i] - min));
                l = Math.max(0, Math.min(nmax, l));
                laux[i] = (byte) l;
                float w = weights[i];
                sumL += w * l;
                sumL2 += w * l * l;
                sumXl += w * l * x[xo + i];
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXl - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXl) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXl / sumL2;
                }
                float mad = 0;
                for (int i = 0; i < n; ++i) {
                    float diff = thisScale * laux[i] + thisMin - x[xo + i];
                    diff = useMad ? Math.abs(diff) : diff * diff;
                    mad += weights[i] * diff;
                }
                if (mad < bestMad) {
                    System.arraycopy(laux, 0, L, lo, n);
                    bestMad = mad;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        theMin[mo] = -min;
        return scale;
    }

    /**
     * ggml's {@code make_qx_quants} with {@code rmse_type = 1} and no importance weights (the
     * {@code quantize_row_q6_K_ref} case): symmetric levels {@code -nmax..nmax-1}, weights
     * {@code x²}, a search over 19 scales. Writes {@code level + nmax} to {@code L[lo..)}.
     */
    static float makeQxQuantsRmse1(int n, int nmax, float[] x, int xo, byte[] L, int lo) {
        float max = 0, amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xo + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + i];
            }
        }
        if (amax < 1e-15f) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            return 0.f;
        }
        float iscale = -nmax / max;
        float sumlx = 0, suml2 = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xo + i];
            int l = GgmlRounding.nearestInt(iscale * xi);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lo + i] = (byte) (l + nmax);
            float w = xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
        float best = scale * sumlx;
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) continue;
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = GgmlRounding.nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                float w = xi * xi;
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; ++i) {
                    int l = GgmlRounding.nearestInt(iscale * x[xo + i]);
                    L[lo + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }
}
