package io.modelopt.core.kernel;

import io.modelopt.core.kv.Fp8E4M3;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvScaleLayout;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Dequantization of cached entries inside the attention kernel: one KV head's entries of
 * {@code m} positions to floats, {@code rows[p·headDim ..]}, from BF16, INT8 (with its per-token
 * scale) or FP8 E4M3 (with its layer's or head's scale). The conversion is element by element, the
 * same at every vector width and for any head size (stories260K's 8, too small for llama.cpp's
 * 32-value blocks); the dot products and weighted sums that follow are the vector kernels the
 * F16 path uses. Bit for bit what {@link io.modelopt.core.kv.KvStorage#readKey} returns.
 */
final class KvRows {
    private KvRows() {}

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort S16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final float[] FP8 = fp8Table();

    private static float[] fp8Table() {
        float[] t = new float[256];
        for (int c = 0; c < 256; c++) t[c] = Fp8E4M3.decode((byte) c);
        return t;
    }

    /**
     * 2^119: an E4M3 byte's exponent and mantissa bits moved into a float's (bits 20..30), with the
     * float's exponent raised by one, are its value × 2^-119 for every normal E4M3 value ({@link #fp8Vector}).
     */
    private static final float FP8_BIAS_RAISED = 0x1p119f;

    static void gather(KvLayout l, MemorySegment seg, MemorySegment scales, long[] rowOffsets, int c, int m, long headOffset, float[] rows,
                       boolean vector) {
        int d = l.headDim();
        long entryBytes = l.entryBytes();
        KvScaleLayout sl = l.scales();
        float layerScale = switch (sl) {
            case PER_LAYER -> scales.getAtIndex(F32, 0);
            case PER_LAYER_HEAD -> scales.getAtIndex(F32, headOffset / l.headStride());
            default -> 1f;
        };
        for (int p = 0; p < m; p++) {
            long off = rowOffsets[c + p] + headOffset;
            int r = p * d;
            switch (l.dtype()) {
                case F32 -> MemorySegment.copy(seg, F32, off, rows, r, d);
                case F16 -> WeightData.halves(seg, off, rows, r, d);
                case BF16 -> {
                    for (int i = vector ? bf16Vector(seg, off, rows, r, d) : 0; i < d; i++) rows[r + i] = Float.intBitsToFloat((seg.get(S16, off + 2L * i) & 0xFFFF) << 16);
                }
                case INT8 -> {
                    float s = scales.getAtIndex(F32, off / entryBytes); // PER_TOKEN_HEAD: scales are laid out like the entries
                    for (int i = vector ? int8Vector(seg, off, s, rows, r, d) : 0; i < d; i++) rows[r + i] = seg.get(ValueLayout.JAVA_BYTE, off + i) * s;
                }
                case FP8_E4M3 -> {
                    for (int i = vector ? fp8Vector(seg, off, layerScale, rows, r, d) : 0; i < d; i++) rows[r + i] = FP8[seg.get(ValueLayout.JAVA_BYTE, off + i) & 0xFF] * layerScale;
                }
            }
        }
    }

    // The vector conversions: whole {@link Simd#BL} (or {@link Simd#SL}) loads, widened part by part
    // to float vectors; each returns the first element left for the scalar tail (all of a head
    // smaller than one load, e.g. head size 8 at 512 bits). Same values as the scalar loops, bit for bit.

    private static int int8Vector(MemorySegment seg, long off, float scale, float[] rows, int r, int d) {
        FloatVector s = FloatVector.broadcast(Simd.F, scale);
        int step = Simd.BL.length(), i = 0;
        for (; i + step <= d; i += step) {
            ByteVector b = ByteVector.fromMemorySegment(Simd.BL, seg, off + i, Simd.LE);
            for (int part = 0; part < Simd.BL_PARTS; part++) {
                ((FloatVector) b.convertShape(VectorOperators.B2F, Simd.F, part)).mul(s).intoArray(rows, r + i + part * Simd.L);
            }
        }
        return i;
    }

    /**
     * E4M3 → float by moving bits: sign to bit 31, exponent and mantissa to bits 20..30 with the
     * exponent raised by one, then × 2^119 × scale (exact: a power of two). The raised exponent
     * keeps every intermediate a normal float: without it an E4M3 subnormal (|x| < 2^-6, about 1%
     * of a cache's entries at scale 1) became a denormal float, and each multiply of a denormal
     * costs a microcode assist (FP8 attention ran at a quarter of INT8's rate). Those codes, m·2^-9
     * for a 3-bit m, are converted from the integer m instead, and blended in.
     */
    private static int fp8Vector(MemorySegment seg, long off, float scale, float[] rows, int r, int d) {
        FloatVector s = FloatVector.broadcast(Simd.F, FP8_BIAS_RAISED * scale), sub = FloatVector.broadcast(Simd.F, 0x1p-9f * scale);
        int step = Simd.BL.length(), i = 0;
        for (; i + step <= d; i += step) {
            ByteVector b = ByteVector.fromMemorySegment(Simd.BL, seg, off + i, Simd.LE);
            for (int part = 0; part < Simd.BL_PARTS; part++) {
                IntVector x = (IntVector) b.convertShape(VectorOperators.B2I, Simd.I, part);
                IntVector mag = x.and(0x7F), sign = x.and(0x80).lanewise(VectorOperators.LSHL, 24);
                FloatVector normal = mag.lanewise(VectorOperators.LSHL, 20).add(1 << 23).or(sign).reinterpretAsFloats().mul(s);
                FloatVector small = ((FloatVector) mag.convert(VectorOperators.I2F, 0)).reinterpretAsInts().or(sign).reinterpretAsFloats().mul(sub);
                normal.blend(small, mag.compare(VectorOperators.LT, 8).cast(Simd.F)).intoArray(rows, r + i + part * Simd.L);
            }
        }
        return i;
    }

    private static int bf16Vector(MemorySegment seg, long off, float[] rows, int r, int d) {
        int step = Simd.L, i = 0;
        for (; i + step <= d; i += step) {
            ShortVector h = ShortVector.fromMemorySegment(Simd.SL, seg, off + 2L * i, Simd.LE);
            ((IntVector) h.convertShape(VectorOperators.S2I, Simd.I, 0)).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(rows, r + i);
        }
        return i;
    }
}
