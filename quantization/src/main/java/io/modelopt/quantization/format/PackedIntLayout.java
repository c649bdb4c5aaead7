package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Our own storage of a group-wise integer weight, laid out for reading rows front to back:
 *
 * <ul>
 *   <li>main tensor: I32 of shape {@code {cols·bits/32, rows}}, each row's codes packed LSB-first
 *       at the bit width into a little-endian bit stream (code {@code k} at bits
 *       {@code [k·bits, (k+1)·bits)} of the row; INT3 packs 32 codes in 3 words, straddling them), a
 *       whole number of words per row;</li>
 *   <li>part 0, scales: F16 (or F32) of shape {@code {groups, rows}};</li>
 *   <li>part 1, zero points (asymmetric schemes only): codes packed LSB-first at the bit width,
 *       each row padded to whole bytes, an I8 tensor of shape {@code {ceil(groups·bits/8), rows}}.</li>
 * </ul>
 *
 * A row is a whole number of int32 words: {@code cols} a multiple of {@link #blockSize} (32 for
 * INT3, 16 for INT2, 8 for INT4, 4 for INT8; group-wise schemes need multiples of 32 anyway). The
 * smaller INT8/INT4 grain lets per-channel INT8 take rows such as stories260K's 172-wide
 * {@code ffn_down}.
 */
public final class PackedIntLayout implements IntLayout {
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Our formats by scheme, built once; {@link PackedIntFormatProvider} registers them. */
    private static final Map<IntScheme, WeightFormat> FORMATS = build();

    private final IntScheme scheme;

    private PackedIntLayout(IntScheme scheme) {
        this.scheme = scheme;
    }

    private static Map<IntScheme, WeightFormat> build() {
        Map<IntScheme, WeightFormat> m = new LinkedHashMap<>();
        for (IntScheme s : schemes()) {
            m.put(s, IntFormats.create(s.formatName(), new PackedIntLayout(s), blockSize(s.bits()), blockBytes(s.bits())));
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * The schemes stored in this layout: bits {2, 3, 4, 8} × group {32, 64, 128, per channel} ×
     * {symmetric, asymmetric}, F16 scales; and per-channel symmetric INT8 with F32 scales.
     */
    public static List<IntScheme> schemes() {
        List<IntScheme> all = new ArrayList<>();
        for (int bits : new int[] {2, 3, 4, 8}) {
            for (int g : new int[] {32, 64, 128, IntScheme.PER_CHANNEL}) {
                all.add(IntScheme.of(bits, g, true));
                all.add(IntScheme.of(bits, g, false));
            }
        }
        all.add(new IntScheme(8, IntScheme.PER_CHANNEL, true, IntScheme.ScaleType.F32));
        return List.copyOf(all);
    }

    /** The format of {@code s} in this layout (named {@link IntScheme#formatName()}), as registered in {@code WeightFormats}. */
    public static WeightFormat format(IntScheme s) {
        WeightFormat f = FORMATS.get(s);
        if (f == null) throw new IllegalArgumentException("no packed integer format for " + s + "; schemes stored: " + FORMATS.keySet());
        return f;
    }

    /** Every format of this layout, in {@link #schemes()} order. */
    public static List<WeightFormat> formats() { return List.copyOf(FORMATS.values()); }

    /** Weights per main-tensor block: the fewest codes that fill whole int32 words (32 / gcd(bits, 32)). */
    public static int blockSize(int bits) { return switch (bits) { case 2 -> 16; case 3 -> 32; case 4 -> 8; case 8 -> 4; default -> throw new IllegalArgumentException("bits " + bits); }; }

    /** Bytes per main-tensor block. */
    static int blockBytes(int bits) { return blockSize(bits) * bits / 8; }

    /** Whether a row of {@code cols} weights of {@code s} can be stored here: whole groups, whole words. */
    public static boolean fits(IntScheme s, int cols) {
        return s.fits(cols) && cols % blockSize(s.bits()) == 0;
    }

    /** int32 words of one row's codes. */
    static int codeWords(IntScheme s, int cols) { return (int) ((long) cols * s.bits() / 32); }

    /** Bytes of one row's packed zero points (0 when symmetric). */
    static int zeroPointBytes(IntScheme s, int cols) { return s.symmetric() ? 0 : (s.groups(cols) * s.bits() + 7) / 8; }

    /** Stored bytes of a {@code rows × cols} weight: codes, scales and zero points, padding included. */
    public static long storedBytes(IntScheme s, int rows, int cols) {
        return (long) rows * (4L * codeWords(s, cols) + (long) s.groups(cols) * s.scaleBytes() + zeroPointBytes(s, cols));
    }

    /** Exact stored bits per weight of rows of {@code cols} weights (from the bytes {@link #storedBytes} counts). */
    public static double bitsPerWeight(IntScheme s, int cols) {
        return 8.0 * storedBytes(s, 1, cols) / cols;
    }

    @Override public IntScheme scheme() { return scheme; }

    @Override public void readRow(WeightMatrix w, int row, IntRow dst) {
        int cols = w.cols(), bits = scheme.bits(), groups = dst.scales.length;
        unpack(w.tensor().data(), (long) row * w.rowBytes(), bits, dst.codes, cols, true);
        TensorData scales = w.part(0);
        MemorySegment sd = scales.data();
        long so = (long) row * groups;
        if (scheme.scaleType() == IntScheme.ScaleType.F16) {
            for (int g = 0; g < groups; g++) dst.scales[g] = Float.float16ToFloat(sd.get(SHORT, (so + g) * 2));
        } else {
            for (int g = 0; g < groups; g++) dst.scales[g] = sd.get(FLOAT, (so + g) * 4);
        }
        if (scheme.symmetric()) {
            java.util.Arrays.fill(dst.zeros, scheme.symmetricZero());
        } else {
            unpack(w.part(1).data(), (long) row * zeroPointBytes(scheme, cols), bits, dst.zeros, groups, false);
        }
    }

    /**
     * {@code n} codes of {@code bits} from the LSB-first bit stream at {@code src[off ..]}, read in
     * int32 words ({@code words}: the stream is whole words) or bytes (zero points, padded to whole bytes).
     */
    static void unpack(MemorySegment src, long off, int bits, int[] dst, int n, boolean words) {
        int mask = (1 << bits) - 1;
        long buf = 0, p = off;
        int have = 0;
        for (int k = 0; k < n; k++) {
            if (have < bits) {
                if (words) {
                    buf |= (src.get(INT, p) & 0xFFFF_FFFFL) << have;
                    have += 32;
                    p += 4;
                } else {
                    buf |= (src.get(ValueLayout.JAVA_BYTE, p) & 0xFFL) << have;
                    have += 8;
                    p++;
                }
            }
            dst[k] = (int) buf & mask;
            buf >>>= bits;
            have -= bits;
        }
    }

    /** The inverse of {@link #unpack}: {@code n} codes into the bit stream at {@code dst[off ..]}, the last word or byte zero-padded. */
    static void pack(int[] src, int n, int bits, MemorySegment dst, long off, boolean words) {
        long buf = 0, p = off;
        int have = 0, unit = words ? 32 : 8;
        for (int k = 0; k < n; k++) {
            buf |= (long) src[k] << have;
            have += bits;
            if (have >= unit) {
                put(dst, p, buf, words);
                p += unit / 8;
                buf >>>= unit;
                have -= unit;
            }
        }
        if (have > 0) put(dst, p, buf, words);
    }

    private static void put(MemorySegment dst, long p, long buf, boolean words) {
        if (words) dst.set(INT, p, (int) buf);
        else dst.set(ValueLayout.JAVA_BYTE, p, (byte) buf);
    }

    @Override public String toString() { return "PackedIntLayout[" + scheme + "]"; }
}
