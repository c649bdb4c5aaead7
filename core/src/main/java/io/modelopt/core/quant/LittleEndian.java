package io.modelopt.core.quant;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Unaligned little-endian field access for block data (GGUF is little endian on every host). */
final class LittleEndian {
    private LittleEndian() {}

    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A half float field as float. */
    static float half(MemorySegment s, long off) {
        return Float.float16ToFloat(s.get(SHORT, off));
    }

    static void putHalf(MemorySegment s, long off, float v) {
        s.set(SHORT, off, Float.floatToFloat16(v));
    }

    static int u8(MemorySegment s, long off) {
        return s.get(ValueLayout.JAVA_BYTE, off) & 0xFF;
    }

    static void checkBlocks(String format, int n, int blockElements) {
        if (n < 0 || n % blockElements != 0) {
            throw new IllegalArgumentException(format + ": " + n + " elements is not a multiple of the block size " + blockElements);
        }
    }
}
