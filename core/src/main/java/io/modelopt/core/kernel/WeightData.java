package io.modelopt.core.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian unaligned layouts for reading weight bytes in place, and the half-float helpers the scalar kernels share. */
final class WeightData {
    private WeightData() {}

    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static float half(MemorySegment m, long off) {
        return Float.float16ToFloat(m.get(SHORT, off));
    }

    /**
     * {@code dst[dstOff + i] = half(m[off + 2i])} for {@code i < n}: a plain loop, which the JIT
     * vectorizes into {@code vcvtph2ps} (16 halves per instruction; the Vector API has no half
     * conversion). Worth it on long runs: 8192 halves take ~0.03 ns each, a 64-half run ~0.2 ns
     * each (mostly the scalar pre- and post-loops).
     */
    static void halves(MemorySegment m, long off, float[] dst, int dstOff, int n) {
        for (int i = 0; i < n; i++) dst[dstOff + i] = Float.float16ToFloat(m.get(SHORT, off + 2L * i));
    }

    static int u8(MemorySegment m, long off) {
        return m.get(ValueLayout.JAVA_BYTE, off) & 0xFF;
    }

    static int s8(MemorySegment m, long off) {
        return m.get(ValueLayout.JAVA_BYTE, off);
    }
}
