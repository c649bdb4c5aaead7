package io.modelopt.quantization.hf;

import java.lang.foreign.MemorySegment;

/**
 * Packs a {@link LogicalWeight} into the tensors of each tool's layout, little-endian, as their
 * Python does (shapes in PyTorch order). The readers of the same layouts are {@link AwqGemmLayout},
 * {@link GptqLayout}, {@link CtPackedLayout} and {@link CtIntLayout}.
 */
final class HfPackers {
    private HfPackers() {}

    private static MemorySegment ints(long n) { return MemorySegment.ofArray(new byte[Math.toIntExact(4 * n)]); }

    private static void or(MemorySegment s, long i, int v) { s.set(Words.I32, 4 * i, s.get(Words.I32, 4 * i) | v); }

    /** AutoAWQ {@code qweight} int32 {@code [in, out/8]}: word {@code [k][c]} nibble {@code i} = code of channel {@code 8c + AWQ_ORDER[i]} ({@code WQLinear_GEMM.from_linear}). */
    static MemorySegment awqQweight(LogicalWeight w) {
        int in = w.cols(), words = w.rows() / 8;
        MemorySegment s = ints((long) in * words);
        for (int k = 0; k < in; k++) {
            for (int c = 0; c < words; c++) {
                int word = 0;
                for (int i = 0; i < 8; i++) word |= w.code(8 * c + AwqGemmLayout.AWQ_ORDER[i], k) << (4 * i);
                s.set(Words.I32, 4 * ((long) k * words + c), word);
            }
        }
        return s;
    }

    /** AutoAWQ {@code qzeros} int32 {@code [in/g, out/8]}, packed as {@link #awqQweight}. */
    static MemorySegment awqQzeros(LogicalWeight w) {
        int groups = w.groups(), words = w.rows() / 8;
        MemorySegment s = ints((long) groups * words);
        for (int g = 0; g < groups; g++) {
            for (int c = 0; c < words; c++) {
                int word = 0;
                for (int i = 0; i < 8; i++) word |= w.zeros()[(8 * c + AwqGemmLayout.AWQ_ORDER[i]) * groups + g] << (4 * i);
                s.set(Words.I32, 4 * ((long) g * words + c), word);
            }
        }
        return s;
    }

    /** GPTQ {@code qweight} int32 {@code [in·bits/32, out]}: inputs {@code j·pf + i} at bits {@code bits·i} of word {@code [j][o]} ({@code QuantLinear.pack}). */
    static MemorySegment gptqQweight(LogicalWeight w) {
        int bits = w.scheme().bits(), pf = 32 / bits, in = w.cols(), out = w.rows();
        MemorySegment s = ints((long) in / pf * out);
        for (int o = 0; o < out; o++) {
            for (int k = 0; k < in; k++) or(s, (long) (k / pf) * out + o, w.code(o, k) << (bits * (k % pf)));
        }
        return s;
    }

    /**
     * GPTQ {@code qzeros} int32 {@code [in/g, out·bits/32]}: zero of output {@code c·pf + i} at bits
     * {@code bits·i} of word {@code [g][c]}; v1 subtracts a 1 from every field with one word
     * subtraction, as GPTQModel's {@code convert_gptq_v2_to_v1_format_module} does.
     */
    static MemorySegment gptqQzeros(LogicalWeight w, boolean v1) {
        int bits = w.scheme().bits(), pf = 32 / bits, groups = w.groups(), words = w.rows() / pf;
        int offset = v1 ? GptqLayout.v1Offset(bits) : 0;
        MemorySegment s = ints((long) groups * words);
        for (int g = 0; g < groups; g++) {
            for (int c = 0; c < words; c++) {
                int word = 0;
                for (int i = 0; i < pf; i++) word |= w.zeros()[(c * pf + i) * groups + g] << (bits * i);
                s.set(Words.I32, 4 * ((long) g * words + c), word - offset);
            }
        }
        return s;
    }

    /** Trivial {@code g_idx} int32 {@code [in]}: {@code k / g}. */
    static MemorySegment gIdx(LogicalWeight w) {
        MemorySegment s = ints(w.cols());
        for (int k = 0; k < w.cols(); k++) s.set(Words.I32, 4L * k, k / w.groupSize());
        return s;
    }

    /** Scales {@code [in/g, out]} (AWQ, GPTQ: transposed), as F16 or F32. */
    static MemorySegment scalesByGroup(LogicalWeight w, boolean f16) {
        int groups = w.groups(), out = w.rows();
        MemorySegment s = MemorySegment.ofArray(new byte[(f16 ? 2 : 4) * groups * out]);
        for (int g = 0; g < groups; g++) for (int o = 0; o < out; o++) put(s, (long) g * out + o, w.scales()[o * groups + g], f16);
        return s;
    }

    /** Scales {@code [out, in/g]} (compressed-tensors), as F16 or F32. */
    static MemorySegment scalesByRow(LogicalWeight w, boolean f16) {
        float[] sc = w.scales();
        MemorySegment s = MemorySegment.ofArray(new byte[(f16 ? 2 : 4) * sc.length]);
        for (int i = 0; i < sc.length; i++) put(s, i, sc[i], f16);
        return s;
    }

    private static void put(MemorySegment s, long i, float v, boolean f16) {
        if (f16) s.set(Words.I16, 2 * i, Float.floatToFloat16(v));
        else s.set(Words.F32, 4 * i, v);
    }

    /** compressed-tensors {@code weight_packed} int32 {@code [out, in·bits/32]} ({@code pack_to_int32}, packed_dim 1; the codes are the signed values plus 2^(bits−1)). */
    static MemorySegment ctPacked(LogicalWeight w) {
        int bits = w.scheme().bits(), pf = 32 / bits, in = w.cols(), out = w.rows(), words = in / pf;
        MemorySegment s = ints((long) out * words);
        for (int o = 0; o < out; o++) {
            for (int k = 0; k < in; k++) or(s, (long) o * words + k / pf, w.code(o, k) << (bits * (k % pf)));
        }
        return s;
    }

    /** compressed-tensors {@code weight_zero_point} int32 {@code [ceil(out/pf), in/g]} ({@code pack_to_int32}, packed_dim 0, padded with zeros). */
    static MemorySegment ctPackedZeros(LogicalWeight w) {
        int bits = w.scheme().bits(), pf = 32 / bits, out = w.rows(), groups = w.groups();
        MemorySegment s = ints((long) ((out + pf - 1) / pf) * groups);
        for (int o = 0; o < out; o++) {
            for (int g = 0; g < groups; g++) or(s, (long) (o / pf) * groups + g, w.zeros()[o * groups + g] << (bits * (o % pf)));
        }
        return s;
    }

    /** compressed-tensors int-quantized {@code weight} int8 {@code [out, in]}: signed values, code − 128. */
    static MemorySegment ctInt8(LogicalWeight w) {
        byte[] b = new byte[w.codes().length];
        for (int i = 0; i < b.length; i++) b[i] = (byte) ((w.codes()[i] & 0xFF) - 128);
        return MemorySegment.ofArray(b);
    }

    /** compressed-tensors int-quantized {@code weight_zero_point} int8 {@code [out, in/g]}: zero − 128. */
    static MemorySegment ctInt8Zeros(LogicalWeight w) {
        byte[] b = new byte[w.zeros().length];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (w.zeros()[i] - 128);
        return MemorySegment.ofArray(b);
    }
}
