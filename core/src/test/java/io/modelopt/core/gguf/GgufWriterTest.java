package io.modelopt.core.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GgufWriterTest {
    @TempDir Path tmp;

    private static String sha256(byte[] b) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** Every fixture (3 written by gguf.cpp's writer, 4 by llama-quantize, 3 by gguf-py) comes back byte for byte. */
    @ParameterizedTest
    @ValueSource(strings = {"stories260K/gguf/stories260K-f32.gguf", "stories260K/gguf/stories260K-q8_0.gguf",
            "stories260K/gguf/stories260K-q4_0.gguf", "brown-llama/gguf/brown-llama-f32.gguf", "brown-llama/gguf/brown-llama-q8_0.gguf",
            "brown-llama/gguf/brown-llama-q6_K.gguf", "brown-llama/gguf/brown-llama-q4_K_M.gguf", "brown-llama/gguf/brown-llama-q4_0.gguf"})
    void roundTripIsByteIdentical(String fixture) throws Exception {
        Path src = Fixtures.file(fixture);
        Path out = tmp.resolve("copy.gguf");
        try (GgufFile f = GgufFile.open(src)) {
            GgufWriter.copyOf(f).write(out);
        }
        assertEquals(Files.size(src), Files.size(out));
        assertEquals(sha256(Files.readAllBytes(src)), sha256(Files.readAllBytes(out)));
    }

    /** One value of every metadata type, arrays of every type, nested arrays and empty arrays survive write → read. */
    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void everyMetadataTypeRoundTrips(int version) throws IOException {
        GgufWriter w = new GgufWriter().version(version)
                .putUInt8("u8", 255).putInt8("i8", -128).putUInt16("u16", 65535).putInt16("i16", -32768)
                .putUInt32("u32", 4294967295L).putInt32("i32", Integer.MIN_VALUE).putFloat32("f32", -1.5e-7f)
                .putBool("bool.t", true).putBool("bool.f", false).putString("str", "héllo ▁wörld 🦙")
                .putString("empty", "").putUInt64("u64", -1L).putInt64("i64", Long.MIN_VALUE).putFloat64("f64", Math.PI)
                .put("a.u8", GgufValue.intArray(GgufType.UINT8, 0, 1, 255))
                .put("a.i8", GgufValue.intArray(GgufType.INT8, -128, 127))
                .put("a.u16", GgufValue.intArray(GgufType.UINT16, 0, 65535))
                .put("a.i16", GgufValue.intArray(GgufType.INT16, -32768, 32767))
                .put("a.u32", GgufValue.intArray(GgufType.UINT32, 0L, 4294967295L))
                .put("a.i32", GgufValue.intArray(GgufType.INT32, -1, 7))
                .put("a.u64", GgufValue.intArray(GgufType.UINT64, -1L, 5L))
                .put("a.i64", GgufValue.intArray(GgufType.INT64, Long.MAX_VALUE, -5L))
                .put("a.f32", GgufValue.floatArray(1f, Float.NaN, Float.NEGATIVE_INFINITY, -0f))
                .put("a.f64", GgufValue.doubleArray(1e300, -0.0))
                .put("a.bool", GgufValue.boolArray(true, false, true))
                .put("a.str", GgufValue.stringArray("a", "", "ü"))
                .put("a.empty", GgufValue.stringArray(List.of()))
                .put("a.nested", GgufValue.arrayArray(List.of(GgufValue.intArray(GgufType.INT32, 1, 2),
                        GgufValue.arrayArray(List.of(GgufValue.stringArray("deep"))), GgufValue.floatArray())));
        Path p = tmp.resolve("all.gguf");
        w.write(p);
        try (GgufFile f = GgufFile.open(p)) {
            assertEquals(version, f.version());
            assertEquals(List.copyOf(w.metadata().keySet()), List.copyOf(f.metadata().keySet()));
            assertEquals(w.metadata(), f.metadata());
            for (var e : f.metadata().entrySet()) assertEquals(w.metadata().get(e.getKey()).type(), e.getValue().type(), e.getKey());
            assertEquals(255, f.getInt("u8"));
            assertEquals(-128, f.getInt("i8"));
            assertEquals(65535, f.getInt("u16"));
            assertEquals(-32768, f.getInt("i16"));
            assertEquals(4294967295L, f.getLong("u32"));
            assertEquals(Integer.MIN_VALUE, f.getInt("i32"));
            assertEquals(-1.5e-7f, f.getFloat("f32"));
            assertTrue(f.getBoolean("bool.t"));
            assertEquals("héllo ▁wörld 🦙", f.getString("str"));
            assertEquals("", f.getString("empty"));
            assertEquals(new java.math.BigInteger("18446744073709551615"), f.get("u64").toJava());
            assertThrows(io.modelopt.core.ModelFormatException.class, () -> f.getLong("u64"));
            assertEquals(Long.MIN_VALUE, f.getLong("i64"));
            assertEquals(Math.PI, f.getDouble("f64"));
            assertArrayEquals(new int[] {0, 1, 255}, f.getIntArray("a.u8"));
            assertArrayEquals(new int[] {-128, 127}, f.getIntArray("a.i8"));
            assertArrayEquals(new long[] {0, 4294967295L}, f.getArray("a.u32").longs());
            assertEquals(List.of("a", "", "ü"), f.getStringList("a.str"));
            assertEquals(List.of(), f.getStringList("a.empty"));
            assertEquals(4, f.getFloatArray("a.f32").length);
            assertTrue(Float.isNaN(f.getFloatArray("a.f32")[1]));
            GgufValue.Array nested = f.getArray("a.nested");
            assertEquals(GgufType.ARRAY, nested.elementType());
            assertEquals(List.of(List.of(1L, 2L), List.of(List.of("deep")), List.of()), nested.toJava());
            assertThrows(io.modelopt.core.ModelFormatException.class, () -> f.getString("u8"));
            assertThrows(io.modelopt.core.ModelFormatException.class, () -> f.getInt("missing"));
            assertEquals(java.util.Optional.empty(), f.findInt("missing"));
        }
        // and the bytes are a fixed point of read → write
        byte[] first = Files.readAllBytes(p);
        try (GgufFile f = GgufFile.open(p)) {
            assertArrayEquals(first, GgufWriter.copyOf(f).toByteArray());
        }
    }

    /** Tensors of every ggml type with random bytes, alignment 64: offsets, padding and contents. */
    @Test
    void everyGgmlTypeWithAlignment64() throws IOException {
        Random rnd = new Random(42);
        GgufWriter w = new GgufWriter().putString("general.architecture", "test").alignment(64);
        Map<String, byte[]> contents = new java.util.LinkedHashMap<>();
        for (GgmlType t : GgmlType.values()) {
            long[] dims = {t.blockSize() * 3L, 2, 1};
            byte[] data = new byte[(int) t.bytesFor(dims[0] * dims[1])];
            rnd.nextBytes(data);
            String name = "t." + t.name().toLowerCase();
            w.addTensor(name, t, dims, data);
            contents.put(name, data);
        }
        w.addTensor("scalar", GgmlType.F32, new long[0], new byte[] {0, 0, (byte) 0x80, 0x3f});
        w.addTensor("empty", GgmlType.F32, new long[] {0}, new byte[0]);
        // a streamed tensor
        w.addTensor("streamed", GgmlType.I32, new long[] {5}, out -> {
            ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 5; i++) b.putInt(i * 11);
            out.write(b.flip());
        });
        Path p = tmp.resolve("types.gguf");
        w.write(p);
        try (GgufFile f = GgufFile.open(p)) {
            assertEquals(64, f.alignment());
            assertEquals(0, f.dataOffset() % 64);
            assertEquals(GgmlType.values().length + 3, f.tensorInfos().size());
            long expected = 0;
            for (GgufTensorInfo info : f.tensorInfos()) {
                assertEquals(expected, info.offset(), info.name());
                assertEquals(0, info.offset() % 64);
                expected += (info.byteSize() + 63) / 64 * 64;
            }
            assertEquals(f.fileSize(), f.dataOffset() + expected);
            for (var e : contents.entrySet()) {
                TensorData t = f.tensor(e.getKey());
                assertArrayEquals(e.getValue(), t.data().toArray(ValueLayout.JAVA_BYTE), e.getKey());
            }
            assertEquals(1f, f.tensor("scalar").data().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0));
            assertEquals(0, f.tensor("empty").byteSize());
            assertEquals(44, f.tensor("streamed").data().get(ValueLayout.JAVA_INT_UNALIGNED, 16));
            assertEquals(GgmlType.Q4_K, f.tensorInfo("t.q4_k").orElseThrow().type());
            assertArrayEquals(new long[] {768, 2, 1}, f.tensorInfo("t.q4_k").orElseThrow().dims());
        }
    }

    @Test
    void writerRejectsInvalidInput() {
        GgufWriter w = new GgufWriter();
        assertThrows(IllegalArgumentException.class, () -> w.version(1));
        assertThrows(IllegalArgumentException.class, () -> w.alignment(48));
        assertThrows(IllegalArgumentException.class, () -> w.putInt32("general.alignment", 32));
        assertThrows(IllegalArgumentException.class, () -> w.putUInt8("x", 256));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("q", GgmlType.Q4_0, new long[] {48}, new byte[27]));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("f", GgmlType.F32, new long[] {4}, new byte[15]));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("n".repeat(64), GgmlType.F32, new long[] {1}, new byte[4]));
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("d", GgmlType.F32, new long[] {1, 1, 1, 1, 1}, new byte[4]));
        w.addTensor("a", GgmlType.F32, new long[] {1}, new byte[4]);
        assertThrows(IllegalArgumentException.class, () -> w.addTensor("a", GgmlType.F32, new long[] {1}, new byte[4]));
        GgufWriter lying = new GgufWriter().addTensor("s", GgmlType.F32, new long[] {2}, out -> out.write(ByteBuffer.allocate(4)));
        assertThrows(IllegalStateException.class, lying::toByteArray);
    }

    /** Re-putting a key keeps its position (the reader needs insertion order to round-trip). */
    @Test
    void putReplacesInPlace() {
        GgufWriter w = new GgufWriter().putString("a", "1").putString("b", "2").putString("a", "3");
        assertEquals(List.of("a", "b"), List.copyOf(w.metadata().keySet()));
        assertEquals(GgufValue.string("3"), w.metadata().get("a"));
    }
}
