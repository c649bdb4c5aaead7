package io.modelopt.core.quant;

import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;

/** Random but well-formed blocks of every format: random quant bits, finite half-float scales of random sign and size. */
public final class TestBlocks {
    private TestBlocks() {}

    private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static short randomHalf(Random r, float magnitude) {
        float v = (float) (magnitude * (0.05 + r.nextDouble()) * (r.nextBoolean() ? 1 : -1));
        return Float.floatToFloat16(v);
    }

    /** {@code rows × cols} elements of {@code type} in a fresh segment. */
    public static MemorySegment random(GgmlType type, int rows, int cols, long seed) {
        Random r = new Random(seed);
        long bytes = type.bytesFor((long) rows * cols);
        MemorySegment m = Arena.ofAuto().allocate(bytes, 64);
        byte[] raw = new byte[(int) bytes];
        r.nextBytes(raw);
        MemorySegment.copy(raw, 0, m, ValueLayout.JAVA_BYTE, 0, raw.length);
        long blocks = bytes / type.typeSize();
        for (long b = 0; b < blocks; b++) {
            long blk = b * type.typeSize();
            switch (type) {
                case F32 -> m.set(F, blk, (float) r.nextGaussian());
                case F16 -> m.set(S, blk, Float.floatToFloat16((float) r.nextGaussian()));
                case BF16 -> m.set(S, blk, BF16.fromFloat((float) r.nextGaussian()));
                case Q8_0, Q4_0, Q5_0 -> m.set(S, blk, randomHalf(r, 0.05f));
                case Q4_1 -> {
                    m.set(S, blk, Float.floatToFloat16((float) (0.01 + 0.05 * r.nextDouble())));
                    m.set(S, blk + 2, randomHalf(r, 0.3f));
                }
                case Q4_K, Q5_K -> {
                    m.set(S, blk, Float.floatToFloat16((float) (0.001 + 0.002 * r.nextDouble())));
                    m.set(S, blk + 2, Float.floatToFloat16((float) (0.001 + 0.002 * r.nextDouble())));
                }
                case Q6_K -> m.set(S, blk + 208, randomHalf(r, 0.0005f));
                case Q8_K -> m.set(F, blk, (float) (0.001 + 0.01 * r.nextDouble()));
                default -> throw new IllegalArgumentException(type.toString());
            }
        }
        return m;
    }
}
