package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * An independent float64 decoder of the ggml block formats for the tests, written per element from
 * the block definitions in ggml-common.h (not from the production code's loops): element {@code e}
 * of a block is located by formula and decoded in double.
 */
public final class RefDecode {
    private RefDecode() {}

    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** IEEE binary16 decoded by hand (sign, exponent, mantissa), not via Float.float16ToFloat. */
    public static double half(short h) {
        int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
        double v;
        if (exp == 0) v = man * Math.pow(2, -24);
        else if (exp == 31) v = man == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        else v = (1024 + man) * Math.pow(2, exp - 25);
        return sign == 1 ? -v : v;
    }

    private static int u8(MemorySegment m, long o) { return m.get(ValueLayout.JAVA_BYTE, o) & 0xFF; }

    private static double h(MemorySegment m, long o) { return half(m.get(S, o)); }

    /** 6-bit scale (which=0) or min (which=1) of sub-block j of a Q4_K/Q5_K block, from the bit layout of get_scale_min_k4. */
    static int kScale(MemorySegment m, long scales, int j, int which) {
        // bytes 0..3: scales 0..3 (low 6 bits), top 2 bits = high bits of scales 4..7
        // bytes 4..7: mins 0..3 (low 6 bits), top 2 bits = high bits of mins 4..7
        // bytes 8..11: low nibble = low 4 bits of scales 4..7, high nibble = low 4 bits of mins 4..7
        if (j < 4) return u8(m, scales + j + 4 * which) & 0x3F;
        int low4 = which == 0 ? u8(m, scales + 8 + j - 4) & 0xF : u8(m, scales + 8 + j - 4) >> 4;
        int high2 = u8(m, scales + (j - 4) + 4 * which) >> 6;
        return low4 + 16 * high2;
    }

    /** Element {@code e} of the block at {@code blk}. */
    public static double element(GgmlType type, MemorySegment m, long blk, int e) {
        return switch (type) {
            case F32 -> m.get(F, blk);
            case F16 -> h(m, blk);
            case BF16 -> Float.intBitsToFloat((m.get(S, blk) & 0xFFFF) << 16);
            case Q8_0 -> h(m, blk) * m.get(ValueLayout.JAVA_BYTE, blk + 2 + e);
            case Q4_0 -> h(m, blk) * (nibble(m, blk + 2, e) - 8);
            case Q4_1 -> h(m, blk) * nibble(m, blk + 4, e) + h(m, blk + 2);
            case Q5_0 -> {
                long qh = m.get(I, blk + 2) & 0xFFFFFFFFL;
                int q = nibble(m, blk + 6, e) + 16 * (int) ((qh >> e) & 1);
                yield h(m, blk) * (q - 16);
            }
            case Q4_K, Q5_K -> {
                boolean five = type == GgmlType.Q5_K;
                int sub = e / 32, l = e % 32;
                long qs = blk + (five ? 48 : 16) + 32L * (sub / 2);
                int q = (sub % 2 == 0) ? u8(m, qs + l) & 0xF : u8(m, qs + l) >> 4;
                if (five) q += 16 * ((u8(m, blk + 16 + l) >> sub) & 1);
                yield h(m, blk) * kScale(m, blk + 4, sub, 0) * q - h(m, blk + 2) * kScale(m, blk + 4, sub, 1);
            }
            case Q6_K -> {
                int half = e / 128, within = e % 128, l = within % 32, group = within / 32;
                long ql = blk + 64L * half + l + (group % 2) * 32;
                int low = group < 2 ? u8(m, ql) & 0xF : u8(m, ql) >> 4;
                int high = (u8(m, blk + 128 + 32L * half + l) >> (2 * group)) & 3;
                int sc = m.get(ValueLayout.JAVA_BYTE, blk + 192 + e / 16);
                yield h(m, blk + 208) * sc * (low + 16 * high - 32);
            }
            case Q8_K -> m.get(F, blk) * m.get(ValueLayout.JAVA_BYTE, blk + 4 + e);
            default -> throw new IllegalArgumentException(type.toString());
        };
    }

    private static int nibble(MemorySegment m, long qs, int e) {
        return e < 16 ? u8(m, qs + e) & 0xF : u8(m, qs + e - 16) >> 4;
    }

    /** Decodes {@code n} elements starting at byte {@code off}. */
    public static double[] decode(GgmlType type, MemorySegment m, long off, int n) {
        double[] out = new double[n];
        int be = type.blockSize();
        for (int i = 0; i < n; i++) out[i] = element(type, m, off + (long) (i / be) * type.typeSize(), i % be);
        return out;
    }
}
