package io.modelopt.quantization.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Each layout's packer against a decoder written here from the authors' Python (bit shifts as they
 * write them, not our readers), and our reader against the values packed.
 */
class HfLayoutsTest {
    static LogicalWeight random(IntScheme s, int rows, int cols, long seed, int minZero) {
        Random r = new Random(seed);
        int gs = s.groupSize(cols), groups = cols / gs;
        byte[] codes = new byte[rows * cols];
        for (int i = 0; i < codes.length; i++) codes[i] = (byte) r.nextInt(s.maxCode() + 1);
        float[] scales = new float[rows * groups];
        int[] zeros = new int[rows * groups];
        for (int i = 0; i < scales.length; i++) {
            scales[i] = Float.float16ToFloat(Float.floatToFloat16(0.002f + 0.01f * r.nextFloat()));
            zeros[i] = s.symmetric() ? s.symmetricZero() : minZero + r.nextInt(s.maxCode() + 1 - minZero);
        }
        return new LogicalWeight(s, rows, cols, gs, codes, scales, zeros);
    }

    static int i32(MemorySegment m, long i) { return m.get(Words.I32, 4 * i); }

    static TensorData t(String name, GgmlType type, MemorySegment data, long... pytorch) {
        long[] g = new long[pytorch.length];
        for (int i = 0; i < g.length; i++) g[i] = pytorch[g.length - 1 - i];
        return new TensorData(name, type, g, data);
    }

    static void assertReads(LogicalWeight w, WeightMatrix m) {
        IntLayout layout = HfFormats.layout(m.format()).orElseThrow();
        IntRow row = new IntRow(layout.scheme(), w.cols());
        for (int o = 0; o < w.rows(); o++) {
            layout.readRow(m, o, row);
            for (int k = 0; k < w.cols(); k++) assertEquals(w.code(o, k), row.codes[k], "code " + o + "," + k);
            for (int g = 0; g < w.groups(); g++) {
                assertEquals(w.zeros()[o * w.groups() + g], row.zeros[g], "zero " + o + "," + g);
                assertEquals(w.scales()[o * w.groups() + g], row.scales[g], "scale " + o + "," + g);
            }
        }
    }

    /** AutoAWQ packing_utils.unpack_awq + reverse_awq_order, as written there. */
    @Test void awqGemmMatchesAutoAwqUnpack() {
        int out = 64, in = 256;
        LogicalWeight w = random(IntScheme.of(4, 128, false), out, in, 1, 0);
        MemorySegment qw = HfPackers.awqQweight(w), qz = HfPackers.awqQzeros(w);
        int[] shifts = {0, 4, 8, 12, 16, 20, 24, 28};
        int[] reverse = {0, 4, 1, 5, 2, 6, 3, 7}; // AWQ_REVERSE_ORDER
        for (int k = 0; k < in; k++) {
            int[] iweights = new int[out]; // iweights.view(in, -1): position c*8+i = (qweight[k][c] >> shifts[i])
            for (int c = 0; c < out / 8; c++) for (int i = 0; i < 8; i++) iweights[c * 8 + i] = (i32(qw, (long) k * (out / 8) + c) >> shifts[i]) & 15;
            for (int o = 0; o < out; o++) {
                int reordered = iweights[(o / 8) * 8 + reverse[o % 8]]; // iweights[:, reverse_order_tensor]
                assertEquals(w.code(o, k), reordered, "qweight in " + k + " out " + o);
            }
        }
        for (int g = 0; g < 2; g++) {
            for (int o = 0; o < out; o++) {
                int z = (i32(qz, g * (out / 8) + o / 8) >> shifts[reverse[o % 8]]) & 15;
                assertEquals(w.zeros()[o * 2 + g], z);
            }
        }
        WeightMatrix m = WeightMatrix.of(HfFormats.of(HfLayoutKind.AWQ_GEMM, w.scheme()), out, in,
                t("qweight", GgmlType.I32, qw, in, out / 8), t("qzeros", GgmlType.I32, qz, 2, out / 8),
                t("scales", GgmlType.F16, HfPackers.scalesByGroup(w, true), 2, out));
        assertReads(w, m);
    }

    /** AutoGPTQ qlinear_cuda_old forward (torch path): (qweight >> wf) & mask, zeros ((qzeros >> wf) + 1) & mask. */
    @Test void gptqV1MatchesAutoGptqUnpack() {
        for (int bits : new int[] {2, 4, 8}) {
            for (boolean sym : new boolean[] {true, false}) {
                int out = 64, in = 256, pf = 32 / bits, groups = in / 64;
                LogicalWeight w = random(IntScheme.of(bits, 64, sym), out, in, bits, 1); // zeros ≥ 1: v1 stores zero − 1
                MemorySegment qw = HfPackers.gptqQweight(w), qz = HfPackers.gptqQzeros(w, true);
                int mask = (1 << bits) - 1;
                for (int j = 0; j < in / pf; j++) {
                    for (int i = 0; i < pf; i++) {
                        for (int o = 0; o < out; o++) assertEquals(w.code(o, j * pf + i), (i32(qw, (long) j * out + o) >>> (bits * i)) & mask);
                    }
                }
                for (int g = 0; g < groups; g++) {
                    for (int c = 0; c < out / pf; c++) {
                        for (int i = 0; i < pf; i++) {
                            int z = ((i32(qz, g * (out / pf) + c) >>> (bits * i)) + 1) & mask;
                            assertEquals(w.zeros()[(c * pf + i) * groups + g], z, bits + "-bit zero");
                        }
                    }
                }
                WeightMatrix m = WeightMatrix.of(HfFormats.of(HfLayoutKind.GPTQ, w.scheme()), out, in,
                        t("qweight", GgmlType.I32, qw, in / pf, out), t("qzeros", GgmlType.I32, qz, groups, out / pf),
                        t("scales", GgmlType.F16, HfPackers.scalesByGroup(w, true), groups, out));
                assertReads(w, m);
            }
        }
    }

    /** Zero point 0 in v1: GPTQModel's convert_gptq_v1_to_v2_format_module adds 0x11111111 to each word, which recovers it exactly. */
    @Test void gptqV1ZeroPointZeroComesBackAsGptqModelReadsIt() {
        int out = 64, in = 128;
        LogicalWeight w = random(IntScheme.of(4, 32, false), out, in, 7, 0);
        w.zeros()[0] = 0;
        w.zeros()[5] = 0;
        MemorySegment qz = HfPackers.gptqQzeros(w, true);
        for (int g = 0; g < 4; g++) {
            for (int c = 0; c < out / 8; c++) {
                int v2 = i32(qz, g * (out / 8) + c) + 0b00010001000100010001000100010001;
                for (int i = 0; i < 8; i++) assertEquals(w.zeros()[(c * 8 + i) * 4 + g], (v2 >>> (4 * i)) & 15);
            }
        }
        WeightMatrix m = WeightMatrix.of(HfFormats.of(HfLayoutKind.GPTQ, w.scheme()), out, in,
                t("qweight", GgmlType.I32, HfPackers.gptqQweight(w), in / 8, out), t("qzeros", GgmlType.I32, qz, 4, out / 8),
                t("scales", GgmlType.F16, HfPackers.scalesByGroup(w, true), 4, out));
        assertReads(w, m);
    }

    /** compressed-tensors unpack_from_int32 (packed_dim 1 for weights, 0 for zero points), then − offset for signed. */
    @Test void ctPackedMatchesUnpackFromInt32() {
        for (int bits : new int[] {2, 4, 8}) {
            int out = 40, in = 128, pf = 32 / bits, groups = 4, mask = (1 << bits) - 1, offset = (1 << bits) / 2;
            LogicalWeight w = random(IntScheme.of(bits, 32, false), out, in, 10 + bits, 0);
            MemorySegment p = HfPackers.ctPacked(w), zp = HfPackers.ctPackedZeros(w);
            for (int o = 0; o < out; o++) {
                for (int i = 0; i < pf; i++) {
                    for (int c = 0; c < in / pf; c++) {
                        int signed = ((i32(p, (long) o * (in / pf) + c) >> (bits * i)) & mask) - offset; // unpacked[:, i::pf]
                        assertEquals(w.code(o, c * pf + i) - offset, signed);
                    }
                }
            }
            int zRows = (out + pf - 1) / pf;
            for (int i = 0; i < pf; i++) {
                for (int r = 0; r < zRows; r++) {
                    int o = r * pf + i; // unpacked[i::pf, :]
                    if (o >= out) continue; // padding
                    for (int g = 0; g < groups; g++) assertEquals(w.zeros()[o * groups + g] - offset, ((i32(zp, (long) r * groups + g) >> (bits * i)) & mask) - offset);
                }
            }
            WeightMatrix m = WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_PACKED, w.scheme()), out, in,
                    t("weight_packed", GgmlType.I32, p, out, in / pf), t("weight_scale", GgmlType.F16, HfPackers.scalesByRow(w, true), out, groups),
                    t("weight_zero_point", GgmlType.I32, zp, zRows, groups));
            assertReads(w, m);
        }
    }

    /** compressed-tensors int-quantized: int8 signed values, w = (x_q − zp) · scale. */
    @Test void ctInt8MatchesSignedStorage() {
        int out = 16, in = 64;
        LogicalWeight w = random(new IntScheme(8, IntScheme.PER_CHANNEL, false, IntScheme.ScaleType.F32), out, in, 3, 0);
        MemorySegment q = HfPackers.ctInt8(w), zp = HfPackers.ctInt8Zeros(w);
        for (int o = 0; o < out; o++) {
            for (int k = 0; k < in; k++) assertEquals(w.code(o, k) - 128, q.get(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) o * in + k));
            assertEquals(w.zeros()[o] - 128, zp.get(java.lang.foreign.ValueLayout.JAVA_BYTE, o));
        }
        WeightMatrix m = WeightMatrix.of(HfFormats.of(HfLayoutKind.CT_INT, w.scheme()), out, in, t("weight", GgmlType.I8, q, out, in),
                t("weight_scale", GgmlType.F32, HfPackers.scalesByRow(w, false), out, 1), t("weight_zero_point", GgmlType.I8, zp, out, 1));
        assertReads(w, m);
        float[] row = new float[in];
        m.dequantizeRow(3, row, 0);
        float[] expect = new float[in];
        for (int k = 0; k < in; k++) expect[k] = w.scales()[3] * (w.code(3, k) - w.zeros()[3]);
        assertArrayEquals(expect, row);
    }
}
