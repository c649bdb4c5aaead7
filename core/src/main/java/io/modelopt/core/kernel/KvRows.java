package io.modelopt.core.kernel;

import io.modelopt.core.kv.Fp8E4M3;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvScaleLayout;

import java.lang.foreign.MemorySegment;
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

    static void gather(KvLayout l, MemorySegment seg, MemorySegment scales, long[] rowOffsets, int c, int m, long headOffset, float[] rows) {
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
                    for (int i = 0; i < d; i++) rows[r + i] = Float.intBitsToFloat((seg.get(S16, off + 2L * i) & 0xFFFF) << 16);
                }
                case INT8 -> {
                    float s = scales.getAtIndex(F32, off / entryBytes); // PER_TOKEN_HEAD: scales are laid out like the entries
                    for (int i = 0; i < d; i++) rows[r + i] = seg.get(ValueLayout.JAVA_BYTE, off + i) * s;
                }
                case FP8_E4M3 -> {
                    for (int i = 0; i < d; i++) rows[r + i] = FP8[seg.get(ValueLayout.JAVA_BYTE, off + i) & 0xFF] * layerScale;
                }
            }
        }
    }
}
