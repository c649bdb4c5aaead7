package io.modelopt.quantization.gguf;

/** Bit packing the 256-element k-quant formats share ({@code QK_K} super-blocks). */
final class SuperBlocks {
    private SuperBlocks() {}

    static final int QK_K = 256;

    /** Sum of squares of the 256 values of a super-block, in order. */
    static float sumSquares(float[] x, int off) {
        float s = 0;
        for (int l = 0; l < QK_K; ++l) s += x[off + l] * x[off + l];
        return s;
    }

    /** Q2_K/Q3_K low bits: {@code qs[j/4 + l] = L[j+l] | L[j+l+32] << 2 | L[j+l+64] << 4 | L[j+l+96] << 6}. */
    static void packTwoBits(byte[] L, byte[] dst, int qs) {
        for (int j = 0; j < QK_K; j += 128) {
            for (int l = 0; l < 32; ++l) {
                dst[qs + j / 4 + l] = (byte) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
            }
        }
    }

    /** Q4_K/Q5_K: eight 6-bit scales and mins into 12 bytes, as the quantizers of ggml write them (uint8 stores). */
    static void packScaleMinK4(int[] ls, int[] lm, byte[] dst, int scales) {
        for (int j = 0; j < 8; ++j) {
            int s = ls[j] & 0xFF, m = lm[j] & 0xFF;
            if (j < 4) {
                dst[scales + j] = (byte) s;
                dst[scales + j + 4] = (byte) m;
            } else {
                dst[scales + j + 4] = (byte) ((s & 0xF) | ((m & 0xF) << 4));
                dst[scales + j - 4] |= (byte) ((s >>> 4) << 6);
                dst[scales + j] |= (byte) ((m >>> 4) << 6);
            }
        }
    }

    /** {@code get_scale_min_k4}: sub-block {@code j}'s scale (low byte) and min (second byte). */
    static int scaleMinK4(int j, byte[] q, int scales) {
        int sc, m;
        if (j < 4) {
            sc = q[scales + j] & 63;
            m = q[scales + j + 4] & 63;
        } else {
            sc = (q[scales + j + 4] & 0xF) | (((q[scales + j - 4] & 0xFF) >>> 6) << 4);
            m = ((q[scales + j + 4] & 0xFF) >>> 4) | (((q[scales + j] & 0xFF) >>> 6) << 4);
        }
        return sc | (m << 8);
    }

    /**
     * The final pass of the Q4_K/Q5_K quantizers: each element's level from the stored (half)
     * super-block scales and the 6-bit sub-block scale and min, {@code nearest_int((x + dm)/d)}
     * clamped to {@code 0..nmax}; sub-blocks whose scale is 0 keep their search levels.
     */
    static void requantizeK4(float[] x, int xb, byte[] blk, int off, int scales, int nmax, byte[] L) {
        float d0 = Bytes.fromHalf(readShort(blk, off)), m0 = Bytes.fromHalf(readShort(blk, off + 2));
        for (int j = 0; j < 8; ++j) {
            int sm = scaleMinK4(j, blk, scales);
            float d = d0 * (sm & 0xFF);
            if (d == 0) continue;
            float dm = m0 * (sm >>> 8);
            for (int ii = 0; ii < 32; ++ii) {
                int l = io.modelopt.core.quant.GgmlRounding.nearestInt((x[xb + 32 * j + ii] + dm) / d);
                L[32 * j + ii] = (byte) Math.max(0, Math.min(nmax, l));
            }
        }
    }

    static short readShort(byte[] b, int off) {
        return (short) ((b[off] & 0xFF) | (b[off + 1] << 8));
    }

    /** Q5_K: 5-bit levels into {@code qh[32]} (fifth bits) and {@code qs[128]} (nibbles). */
    static void packQ5K(byte[] L, byte[] dst, int qh, int qs) {
        Bytes.zero(dst, qh, 32);
        int m1 = 1, m2 = 2;
        int ql = qs;
        for (int n = 0; n < QK_K; n += 64) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    dst[qh + j] |= (byte) m1;
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    dst[qh + j] |= (byte) m2;
                }
                dst[ql + j] = (byte) (l1 | (l2 << 4));
            }
            m1 <<= 2;
            m2 <<= 2;
            ql += 32;
        }
    }

    /** Q4_K: 4-bit levels into {@code qs[128]}. */
    static void packQ4K(byte[] L, byte[] dst, int qs) {
        int q = qs;
        for (int j = 0; j < QK_K; j += 64) {
            for (int l = 0; l < 32; ++l) dst[q + l] = (byte) (L[j + l] | (L[j + l + 32] << 4));
            q += 32;
        }
    }
}
