package io.modelopt.quantization.format;

import io.modelopt.core.kernel.Transcoding;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormats;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The load-time rewrite of a group-wise integer weight into core's Q4_0 or Q8_0 blocks
 * ({@link Transcoding}: {@code w = rowScale · target + offset}).
 *
 * <p><b>Why it is exact.</b> The reference decoder computes {@code s · (c − z)} in float, with
 * {@code s} an F16 value: an 11-bit significand times {@code 2^e}. Every term the rewrite makes is
 * {@code s · n} for an integer {@code |n| ≤ 256}, i.e. {@code (m · n) · 2^e} with {@code |m · n| < 2^20}:
 * representable in float's 24-bit significand (float's exponent range holds F16's, subnormals
 * included), so each product is exact. Q4_0 decodes {@code d · (nibble − 8)} and Q8_0 {@code d · q}
 * with {@code d} the same F16 value, hence the same exact product as the reference when there is no
 * offset. With an offset {@code −s · (z − k)} (k = 8 or 128), the sum
 * {@code s·(c − k) + (−s·(z − k)) = (m · (c − z)) · 2^e} is again a multiple of {@code 2^e} below
 * {@code 2^20 · 2^e}, so float addition is exact too, and equals the exact reference product.
 * (The one difference: where {@code c = z} and {@code s < 0} the reference gives −0 and the sum +0.)
 * F32 scales are rewritten only where no offset is needed (symmetric, per channel): target
 * {@code d = 1}, so the target's value is the integer {@code c − z} itself, and the row scale
 * {@code s} multiplies it once, as the reference does. An F32 scale times an offset sum would
 * round, so asymmetric or group-wise F32 schemes get no rewrite (null: the format's own kernels).
 */
final class IntTranscodings {
    private IntTranscodings() {}

    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final short HALF_ONE = Float.floatToFloat16(1f);
    private static final int BLOCK = 32;

    /** The rewrite of {@code layout}'s scheme, or null where none is exact (F32 scales with groups or zero points). */
    static Transcoding of(IntLayout layout, RowScratch scratch) {
        IntScheme s = layout.scheme();
        boolean f32 = s.scaleType() == IntScheme.ScaleType.F32;
        if (f32 && (s.groupSize() != IntScheme.PER_CHANNEL || !s.symmetric())) return null;
        return s.bits() == 8 ? new ToBlocks(layout, scratch, GgmlType.Q8_0, 128, f32) : new ToBlocks(layout, scratch, GgmlType.Q4_0, 8, f32);
    }

    /**
     * Rows into Q4_0 ({@code d·(n − 8)}, {@code n} a nibble; byte {@code j} of a block holds
     * {@code n[j]} low and {@code n[j+16]} high) or Q8_0 ({@code d·q}, {@code q} a signed byte)
     * blocks: symmetric codes shifted onto the target's own zero ({@code n = c − z + bias}),
     * asymmetric codes kept ({@code n = c}, the offset {@code −d·(z − bias)} carrying the zero point).
     */
    private static final class ToBlocks implements Transcoding {
        private final IntLayout layout;
        private final RowScratch scratch;
        private final IntScheme scheme;
        private final GgmlType targetType;
        /** The target's implicit zero: 8 for Q4_0, 128 for the unsigned view of Q8_0's signed quants. */
        private final int bias;
        /** F32 per-channel scales: target d = 1 and the scale applied per row. */
        private final boolean rowScaled;
        private volatile WeightFormat target;

        ToBlocks(IntLayout layout, RowScratch scratch, GgmlType targetType, int bias, boolean rowScaled) {
            this.layout = layout;
            this.scratch = scratch;
            this.scheme = layout.scheme();
            this.targetType = targetType;
            this.bias = bias;
            this.rowScaled = rowScaled;
        }

        // looked up on first use, not when the format is built: formats are built while WeightFormats loads its providers
        @Override public WeightFormat target() {
            WeightFormat t = target;
            if (t == null) {
                target = t = WeightFormats.forFileType(targetType)
                        .orElseThrow(() -> new IllegalStateException("no " + targetType + " format registered"));
            }
            return t;
        }

        @Override public boolean applies(WeightMatrix w) {
            int cols = w.cols();
            return cols % BLOCK == 0 && scheme.fits(cols) && scheme.groupSize(cols) % BLOCK == 0;
        }

        @Override public void transcodeRow(WeightMatrix w, int row, MemorySegment dst, long offset) {
            IntRow r = scratch.read(layout, w, row);
            int cols = w.cols(), gs = r.groupSize;
            int blockBytes = targetType == GgmlType.Q4_0 ? 18 : 34;
            int[] codes = r.codes;
            for (int b = 0; b < cols / BLOCK; b++) {
                int k0 = b * BLOCK, g = k0 / gs;
                long blk = offset + (long) b * blockBytes;
                dst.set(SHORT, blk, rowScaled ? HALF_ONE : half(r.scales[g], w, row));
                int shift = scheme.symmetric() ? bias - r.zeros[g] : 0;
                if (targetType == GgmlType.Q4_0) {
                    for (int j = 0; j < 16; j++) {
                        int lo = nibble(codes[k0 + j] + shift, w, row), hi = nibble(codes[k0 + 16 + j] + shift, w, row);
                        dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) (lo | hi << 4));
                    }
                } else {
                    for (int j = 0; j < BLOCK; j++) dst.set(ValueLayout.JAVA_BYTE, blk + 2 + j, (byte) (codes[k0 + j] + shift - bias));
                }
            }
        }

        /** The F16 bits of a scale that must be an F16 value (else the target's d would round it: not exact). */
        private static short half(float scale, WeightMatrix w, int row) {
            short h = Float.floatToFloat16(scale);
            if (Float.compare(Float.float16ToFloat(h), scale) != 0) {
                throw new IllegalStateException(w + " row " + row + ": scale " + scale + " of an F16-scale scheme is not an F16 value");
            }
            return h;
        }

        private static int nibble(int n, WeightMatrix w, int row) {
            if ((n & ~0xF) != 0) throw new IllegalStateException(w + " row " + row + ": code " + n + " does not fit a Q4_0 nibble (a zero point outside the scheme's)");
            return n;
        }

        @Override public int offsetGroupSize() {
            if (scheme.symmetric()) return 0;
            // without the matrix, per channel: the row's one offset repeated in every 32-weight block
            return scheme.groupSize() == IntScheme.PER_CHANNEL ? BLOCK : scheme.groupSize();
        }

        @Override public int offsetGroupSize(WeightMatrix w) {
            if (scheme.symmetric()) return 0;
            return scheme.groupSize(w.cols()); // per channel: one offset per row
        }

        @Override public void rowOffsets(WeightMatrix w, int row, float[] dst) {
            if (scheme.symmetric()) throw new UnsupportedOperationException(scheme + ": symmetric, no offsets");
            IntRow r = scratch.read(layout, w, row);
            int ogs = offsetGroupSize(w), gs = r.groupSize;
            for (int i = 0; i < w.cols() / ogs; i++) {
                int g = i * ogs / gs;
                // −d·(z − bias), written d·(bias − z): the same exact product (see the class comment)
                dst[i] = r.scales[g] * (bias - r.zeros[g]);
            }
        }

        @Override public boolean rowScaled() { return rowScaled; }

        @Override public float rowScale(WeightMatrix w, int row) {
            return rowScaled ? scratch.read(layout, w, row).scales[0] : 1f;
        }
    }
}
