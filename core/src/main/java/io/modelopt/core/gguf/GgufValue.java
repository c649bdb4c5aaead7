package io.modelopt.core.gguf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One GGUF metadata value together with its GGUF type, so that a value read from a file can be
 * written back with exactly the same encoding (a {@code uint32} stays a {@code uint32}).
 *
 * <p>Integers of every width are held in a {@code long}: unsigned types hold their unsigned value
 * ({@code uint64} values above {@link Long#MAX_VALUE} keep their raw two's-complement bits).
 * Arrays hold primitive Java arrays, not one object per element, because vocabularies are large
 * (150k token strings, scores and types).
 */
public sealed interface GgufValue permits GgufValue.Int, GgufValue.Float32, GgufValue.Float64, GgufValue.Bool,
        GgufValue.Str, GgufValue.Array {

    GgufType type();

    /**
     * The value as a plain Java object for display: {@link Long} for integers (a {@code uint64}
     * above {@code Long.MAX_VALUE} as {@link java.math.BigInteger}), {@link Float}, {@link Double},
     * {@link Boolean}, {@link String}, and {@link List} of those for arrays.
     */
    Object toJava();

    // ---- factories --------------------------------------------------------------------------

    static Int uint8(int v) { return new Int(GgufType.UINT8, v); }
    static Int int8(int v) { return new Int(GgufType.INT8, v); }
    static Int uint16(int v) { return new Int(GgufType.UINT16, v); }
    static Int int16(int v) { return new Int(GgufType.INT16, v); }
    static Int uint32(long v) { return new Int(GgufType.UINT32, v); }
    static Int int32(int v) { return new Int(GgufType.INT32, v); }
    /** {@code v} is taken as the raw 64 bits (values above 2^63-1 are negative longs). */
    static Int uint64(long v) { return new Int(GgufType.UINT64, v); }
    static Int int64(long v) { return new Int(GgufType.INT64, v); }
    static Float32 float32(float v) { return new Float32(v); }
    static Float64 float64(double v) { return new Float64(v); }
    static Bool bool(boolean v) { return new Bool(v); }
    static Str string(String v) { return new Str(v); }

    /** An array of integers of the given integer type; each value must fit that type. */
    static Array intArray(GgufType type, long... values) { return Array.ofLongs(type, values); }
    static Array intArray(GgufType type, int... values) { return Array.ofLongs(type, Arrays.stream(values).asLongStream().toArray()); }
    static Array floatArray(float... values) { return new Array(GgufType.FLOAT32, values.clone(), values.length); }
    static Array doubleArray(double... values) { return new Array(GgufType.FLOAT64, values.clone(), values.length); }
    static Array boolArray(boolean... values) { return new Array(GgufType.BOOL, values.clone(), values.length); }
    static Array stringArray(List<String> values) {
        String[] a = values.toArray(new String[0]);
        for (String s : a) Objects.requireNonNull(s, "null string in array");
        return new Array(GgufType.STRING, a, a.length);
    }
    static Array stringArray(String... values) { return stringArray(Arrays.asList(values)); }
    /** A nested array (GGUF allows arrays of arrays; ggml itself does not read them, gguf-py does). */
    static Array arrayArray(List<Array> values) {
        Array[] a = values.toArray(new Array[0]);
        for (Array x : a) Objects.requireNonNull(x, "null array in array");
        return new Array(GgufType.ARRAY, a, a.length);
    }

    // ---- the kinds of value -----------------------------------------------------------------

    /** Any of the eight integer types. */
    record Int(GgufType type, long value) implements GgufValue {
        public Int {
            Objects.requireNonNull(type, "type");
            if (!type.isInteger()) throw new IllegalArgumentException(type + " is not an integer type");
            checkRange(type, value);
        }

        static void checkRange(GgufType type, long v) {
            boolean ok = switch (type) {
                case UINT8 -> v >= 0 && v <= 0xFF;
                case INT8 -> v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE;
                case UINT16 -> v >= 0 && v <= 0xFFFF;
                case INT16 -> v >= Short.MIN_VALUE && v <= Short.MAX_VALUE;
                case UINT32 -> v >= 0 && v <= 0xFFFF_FFFFL;
                case INT32 -> v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE;
                default -> true;
            };
            if (!ok) throw new IllegalArgumentException(v + " does not fit " + type);
        }

        /** True for a {@code uint64} above {@code Long.MAX_VALUE}, which no Java {@code long} holds. */
        public boolean exceedsLong() { return type == GgufType.UINT64 && value < 0; }

        @Override public Object toJava() {
            return exceedsLong() ? new java.math.BigInteger(Long.toUnsignedString(value)) : (Object) value;
        }
    }

    record Float32(float value) implements GgufValue {
        @Override public GgufType type() { return GgufType.FLOAT32; }
        @Override public Object toJava() { return value; }
        @Override public boolean equals(Object o) { return o instanceof Float32 f && Float.floatToRawIntBits(f.value) == Float.floatToRawIntBits(value); }
        @Override public int hashCode() { return Float.floatToRawIntBits(value); }
    }

    record Float64(double value) implements GgufValue {
        @Override public GgufType type() { return GgufType.FLOAT64; }
        @Override public Object toJava() { return value; }
        @Override public boolean equals(Object o) { return o instanceof Float64 f && Double.doubleToRawLongBits(f.value) == Double.doubleToRawLongBits(value); }
        @Override public int hashCode() { return Long.hashCode(Double.doubleToRawLongBits(value)); }
    }

    record Bool(boolean value) implements GgufValue {
        @Override public GgufType type() { return GgufType.BOOL; }
        @Override public Object toJava() { return value; }
    }

    record Str(String value) implements GgufValue {
        public Str { Objects.requireNonNull(value, "value"); }
        @Override public GgufType type() { return GgufType.STRING; }
        @Override public Object toJava() { return value; }
    }

    /**
     * A GGUF array: one element type and {@link #size()} elements. The elements are kept as a
     * primitive Java array chosen by the element type: {@code long[]} for integer types,
     * {@code float[]}, {@code double[]}, {@code boolean[]}, {@code String[]} or {@code Array[]}.
     * Instances are immutable; the bulk getters return copies.
     */
    final class Array implements GgufValue {
        private final GgufType elementType;
        private final Object data;
        private final int size;

        /** {@code data} is owned by this array from now on (callers pass a fresh array). */
        Array(GgufType elementType, Object data, int size) {
            this.elementType = Objects.requireNonNull(elementType, "elementType");
            this.data = data;
            this.size = size;
        }

        static Array ofLongs(GgufType type, long[] values) {
            if (!type.isInteger()) throw new IllegalArgumentException(type + " is not an integer type");
            long[] copy = values.clone();
            for (long v : copy) Int.checkRange(type, v);
            return new Array(type, copy, copy.length);
        }

        @Override public GgufType type() { return GgufType.ARRAY; }

        public GgufType elementType() { return elementType; }

        public int size() { return size; }

        /** Element {@code i} as a {@link GgufValue} of the element type. */
        public GgufValue get(int i) {
            Objects.checkIndex(i, size);
            return switch (elementType) {
                case FLOAT32 -> new Float32(((float[]) data)[i]);
                case FLOAT64 -> new Float64(((double[]) data)[i]);
                case BOOL -> new Bool(((boolean[]) data)[i]);
                case STRING -> new Str(((String[]) data)[i]);
                case ARRAY -> ((Array[]) data)[i];
                default -> new Int(elementType, ((long[]) data)[i]);
            };
        }

        /** The elements of an integer-typed array (unsigned 64-bit values as raw bits). */
        public long[] longs() { return ((long[]) expect(GgufType.UINT8)).clone(); }

        public float[] floats() { return ((float[]) expect(GgufType.FLOAT32)).clone(); }

        public double[] doubles() { return ((double[]) expect(GgufType.FLOAT64)).clone(); }

        public boolean[] booleans() { return ((boolean[]) expect(GgufType.BOOL)).clone(); }

        public List<String> strings() { return List.of((String[]) expect(GgufType.STRING)); }

        public List<Array> arrays() { return List.of((Array[]) expect(GgufType.ARRAY)); }

        /** Package-private zero-copy access for the reader's typed getters and the writer. */
        Object rawData() { return data; }

        private Object expect(GgufType wanted) {
            boolean ok = wanted == GgufType.UINT8 ? elementType.isInteger() : elementType == wanted;
            if (!ok) {
                throw new IllegalStateException("array of " + elementType + ", not of " + (wanted == GgufType.UINT8 ? "integers" : wanted));
            }
            return data;
        }

        @Override public Object toJava() {
            List<Object> out = new ArrayList<>(size);
            for (int i = 0; i < size; i++) out.add(get(i).toJava());
            return Collections.unmodifiableList(out);
        }

        @Override public boolean equals(Object o) {
            if (!(o instanceof Array a) || a.elementType != elementType || a.size != size) return false;
            return switch (elementType) {
                case FLOAT32 -> {
                    float[] x = (float[]) data, y = (float[]) a.data;
                    for (int i = 0; i < size; i++) if (Float.floatToRawIntBits(x[i]) != Float.floatToRawIntBits(y[i])) yield false;
                    yield true;
                }
                case FLOAT64 -> {
                    double[] x = (double[]) data, y = (double[]) a.data;
                    for (int i = 0; i < size; i++) if (Double.doubleToRawLongBits(x[i]) != Double.doubleToRawLongBits(y[i])) yield false;
                    yield true;
                }
                case BOOL -> Arrays.equals((boolean[]) data, (boolean[]) a.data);
                case STRING, ARRAY -> Arrays.equals((Object[]) data, (Object[]) a.data);
                default -> Arrays.equals((long[]) data, (long[]) a.data);
            };
        }

        @Override public int hashCode() {
            return elementType.hashCode() * 31 + switch (elementType) {
                case FLOAT32 -> Arrays.hashCode((float[]) data);
                case FLOAT64 -> Arrays.hashCode((double[]) data);
                case BOOL -> Arrays.hashCode((boolean[]) data);
                case STRING, ARRAY -> Arrays.hashCode((Object[]) data);
                default -> Arrays.hashCode((long[]) data);
            };
        }

        @Override public String toString() {
            if (size <= 8) return elementType + toJava().toString();
            return "array<" + elementType + ">[" + size + "]";
        }
    }
}
