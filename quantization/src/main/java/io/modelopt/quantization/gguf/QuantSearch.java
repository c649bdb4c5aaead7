package io.modelopt.quantization.gguf;

import static io.modelopt.core.quant.GgmlRounding.nearestInt;

/**
 * ggml's searches for the scale (and min) of a group of values ({@code make_qx_quants},
 * {@code make_q3_quants}, {@code make_qkx2_quants}, {@code make_qkx3_quants},
 * {@code make_qp_quants} in ggml-quants.c), written to give the same bits: every sum is a float
 * accumulated in the same order, every product associates as in C ({@code w*x*l} is
 * {@code (w*x)*l}), rounding is {@code nearest_int}, and quants are stored with C's
 * {@code int8_t}/{@code uint8_t} truncation.
 *
 * <p>Arrays are passed with offsets: {@code x[xo..xo+n)} are the values, {@code L[lo..lo+n)}
 * receives the levels, {@code w[wo..wo+n)} are weights where a method takes them.
 */
final class QuantSearch {
    private QuantSearch() {}

    /** {@code GROUP_MAX_EPS}: a group whose largest magnitude is below this is all zero. */
    static final float GROUP_MAX_EPS = 1e-15f;

    /** C {@code sqrtf}: the double square root of a float, rounded once, is the correctly rounded float root. */
    static float sqrtf(float v) {
        return (float) Math.sqrt(v);
    }

    private static float weight(float[] qw, int qwo, int rmseType, float xi, int i) {
        if (qw != null) return qw[qwo + i];
        return switch (rmseType) {
            case 1 -> xi * xi;
            case 2 -> 1;
            case 3 -> Math.abs(xi);
            default -> sqrtf(Math.abs(xi));
        };
    }

    /**
     * {@code make_qx_quants}: symmetric levels {@code -nmax..nmax-1} (stored as {@code level + nmax}),
     * weights {@code qw} or, without them, chosen by {@code rmseType}; for {@code rmseType != 0}
     * a search over 19 scales {@code -(nmax + 0.1 is)/max}. Returns the scale.
     */
    static float makeQxQuants(int n, int nmax, float[] x, int xo, byte[] L, int lo, int rmseType, float[] qw, int qwo) {
        float max = 0, amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xo + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            return 0.f;
        }
        float iscale = -nmax / max;
        if (rmseType == 0) {
            for (int i = 0; i < n; ++i) {
                int l = nearestInt(iscale * x[xo + i]);
                L[lo + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
            }
            return 1 / iscale;
        }
        boolean returnEarly = false;
        if (rmseType < 0) {
            rmseType = -rmseType;
            returnEarly = true;
        }
        float sumlx = 0, suml2 = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xo + i];
            int l = nearestInt(iscale * xi);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lo + i] = (byte) (l + nmax);
            float w = weight(qw, qwo, rmseType, xi, i);
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
        if (returnEarly) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
        float best = scale * sumlx;
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) continue;
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                float w = weight(qw, qwo, rmseType, xi, i);
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; ++i) {
                    int l = nearestInt(iscale * x[xo + i]);
                    L[lo + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }

    /**
     * {@code make_q3_quants}: symmetric levels {@code -nmax..nmax-1} (stored as {@code level + nmax})
     * with, when {@code doRmse}, up to five rounds of coordinate descent on the x²-weighted error.
     */
    static float makeQ3Quants(int n, int nmax, float[] x, int xo, byte[] L, int lo, boolean doRmse) {
        float max = 0, amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xo + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            return 0.f;
        }
        float iscale = -nmax / max;
        if (doRmse) {
            float sumlx = 0, suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                L[lo + i] = (byte) l;
                float w = xi * xi;
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            for (int itry = 0; itry < 5; ++itry) {
                int nChanged = 0;
                for (int i = 0; i < n; ++i) {
                    float xi = x[xo + i];
                    float w = xi * xi;
                    int li = L[lo + i];
                    float slx = sumlx - w * xi * li;
                    if (slx > 0) {
                        float sl2 = suml2 - w * li * li;
                        int newL = nearestInt(xi * sl2 / slx);
                        newL = Math.max(-nmax, Math.min(nmax - 1, newL));
                        if (newL != li) {
                            slx += w * xi * newL;
                            sl2 += w * newL * newL;
                            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                                L[lo + i] = (byte) newL;
                                sumlx = slx;
                                suml2 = sl2;
                                ++nChanged;
                            }
                        }
                    }
                }
                if (nChanged == 0) break;
            }
            for (int i = 0; i < n; ++i) L[lo + i] += (byte) nmax;
            return sumlx / suml2;
        }
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * x[xo + i]);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lo + i] = (byte) (l + nmax);
        }
        return 1 / iscale;
    }

    /**
     * {@code make_qkx2_quants}: scale and min of an asymmetric {@code 0..nmax} quantization
     * minimizing the weighted squared (or, with {@code useMad}, absolute) error over
     * {@code nstep+1} candidate scales. Writes the levels to {@code L}, {@code -min} to
     * {@code theMin[mo]}, and returns the scale. {@code laux} is scratch of at least {@code n}.
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int xo, float[] weights, int wo, byte[] L, int lo,
                                float[] theMin, int mo, byte[] laux, float rmin, float rdelta, int nstep, boolean useMad) {
        float min = x[xo], max = x[xo];
        float sumW = weights[wo];
        float sumX = sumW * x[xo];
        for (int i = 1; i < n; ++i) {
            float xi = x[xo + i];
            if (xi < min) min = xi;
            if (xi > max) max = xi;
            float w = weights[wo + i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) min = 0;
        if (max == min) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            theMin[mo] = -min;
            return 0.f;
        }
        return searchMinScale(n, nmax, x, xo, weights, wo, L, lo, theMin, mo, laux, rmin, rdelta, nstep, useMad, min, max, sumW, sumX);
    }

    /**
     * {@code make_qkx3_quants}: {@link #makeQkx2Quants} with weights {@code x²} when
     * {@code weights} is null and an empty range tested as {@code max <= min}.
     */
    static float makeQkx3Quants(int n, int nmax, float[] x, int xo, float[] weights, int wo, byte[] L, int lo,
                                float[] theMin, int mo, byte[] laux, float rmin, float rdelta, int nstep, boolean useMad) {
        float[] w = weights;
        int o = wo;
        if (w == null) {
            w = new float[n];
            o = 0;
            for (int i = 0; i < n; ++i) w[i] = x[xo + i] * x[xo + i];
        }
        float min = x[xo], max = x[xo];
        float sumW = w[o];
        float sumX = sumW * x[xo];
        for (int i = 1; i < n; ++i) {
            float xi = x[xo + i];
            if (xi < min) min = xi;
            if (xi > max) max = xi;
            float wi = w[o + i];
            sumW += wi;
            sumX += wi * xi;
        }
        if (min > 0) min = 0;
        if (max <= min) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            theMin[mo] = -min;
            return 0.f;
        }
        return searchMinScale(n, nmax, x, xo, w, o, L, lo, theMin, mo, laux, rmin, rdelta, nstep, useMad, min, max, sumW, sumX);
    }

    /** The part {@code make_qkx2_quants} and {@code make_qkx3_quants} share once min, max and the weight sums are known. */
    private static float searchMinScale(int n, int nmax, float[] x, int xo, float[] weights, int wo, byte[] L, int lo,
                                        float[] theMin, int mo, byte[] laux, float rmin, float rdelta, int nstep, boolean useMad,
                                        float min, float max, float sumW, float sumX) {
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestMad = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * (x[xo + i] - min));
            L[lo + i] = (byte) Math.max(0, Math.min(nmax, l));
            float diff = scale * L[lo + i] + min - x[xo + i];
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestMad += weights[wo + i] * diff;
        }
        if (nstep < 1) {
            theMin[mo] = -min;
            return scale;
        }
        for (int is = 0; is <= nstep; ++is) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0, sumL2 = 0, sumXl = 0;
            for (int i = 0; i < n; ++i) {
                int l = nearestInt(iscale * (x[xo + i] - min));
                l = Math.max(0, Math.min(nmax, l));
                laux[i] = (byte) l;
                float w = weights[wo + i];
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
                    mad += weights[wo + i] * diff;
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
     * {@code make_qp_quants}: non-negative levels {@code 0..nmax} (stored with C's {@code uint8_t}
     * truncation, read back unsigned) for the non-negative values {@code x} (sub-block scales or
     * mins) under weights {@code qw}: a 9-point scale search, then up to five rounds of coordinate
     * descent. Returns the scale.
     */
    static float makeQpQuants(int n, int nmax, float[] x, int xo, byte[] L, int lo, float[] qw, int qwo) {
        float max = 0;
        for (int i = 0; i < n; ++i) max = max > x[xo + i] ? max : x[xo + i];
        if (max == 0) {
            for (int i = 0; i < n; ++i) L[lo + i] = 0;
            return 0.f;
        }
        float iscale = nmax / max;
        for (int i = 0; i < n; ++i) L[lo + i] = (byte) nearestInt(iscale * x[xo + i]);
        float scale = 1 / iscale;
        float bestMse = 0;
        for (int i = 0; i < n; ++i) {
            float diff = x[xo + i] - scale * (L[lo + i] & 0xFF);
            float w = qw[qwo + i];
            bestMse += w * diff * diff;
        }
        for (int is = -4; is <= 4; ++is) {
            if (is == 0) continue;
            float iscaleIs = (0.1f * is + nmax) / max;
            float scaleIs = 1 / iscaleIs;
            float mse = 0;
            for (int i = 0; i < n; ++i) {
                int l = Math.min(nmax, nearestInt(iscaleIs * x[xo + i]));
                float diff = x[xo + i] - scaleIs * l;
                float w = qw[qwo + i];
                mse += w * diff * diff;
            }
            if (mse < bestMse) {
                bestMse = mse;
                iscale = iscaleIs;
            }
        }
        float sumlx = 0, suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = Math.min(nmax, nearestInt(iscale * x[xo + i]));
            L[lo + i] = (byte) l;
            float w = qw[qwo + i];
            sumlx += w * x[xo + i] * l;
            suml2 += w * l * l;
        }
        for (int itry = 0; itry < 5; ++itry) {
            int nChanged = 0;
            for (int i = 0; i < n; ++i) {
                float w = qw[qwo + i];
                float xi = x[xo + i];
                int li = L[lo + i] & 0xFF;
                float slx = sumlx - w * xi * li;
                float sl2 = suml2 - w * li * li;
                if (slx > 0 && sl2 > 0) {
                    int newL = Math.min(nmax, nearestInt(xi * sl2 / slx));
                    if (newL != li) {
                        slx += w * xi * newL;
                        sl2 += w * newL * newL;
                        if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                            L[lo + i] = (byte) newL;
                            sumlx = slx;
                            suml2 = sl2;
                            ++nChanged;
                        }
                    }
                }
            }
            if (nChanged == 0) break;
        }
        return sumlx / suml2;
    }
}
