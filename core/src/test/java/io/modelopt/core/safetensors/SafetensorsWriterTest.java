package io.modelopt.core.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsWriterTest {
    @TempDir Path tmp;

    /** The fixtures were written by another program (safetensors_io.py); rewriting them must give the same bytes. */
    @Test void rewritesFixturesByteIdentically() throws IOException {
        for (String fixture : List.of("stories260K/hf/model.safetensors", "brown-llama/hf/model.safetensors")) {
            Path in = Fixtures.file(fixture);
            Path out = tmp.resolve(in.getParent().getParent().getFileName() + ".safetensors");
            try (SafetensorsFile f = SafetensorsFile.open(in)) {
                long size = SafetensorsWriter.copyOf(f).write(out);
                assertEquals(Files.size(in), size);
            }
            assertEquals(-1, Files.mismatch(in, out), fixture + " not reproduced byte for byte");
        }
    }

    private static byte[] floats(float... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) b.putFloat(f);
        return b.array();
    }

    private static byte[] expected(String header, byte[] data) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN).putLong(h.length).put(h).put(data).array();
    }

    /** Byte vectors of the reference implementation's own tests (huggingface/safetensors tensor.rs). */
    @Test void matchesReferenceSerializerVectors() throws IOException {
        byte[] data = floats(0, 1, 2, 3, 4, 5);
        Path p = tmp.resolve("a.safetensors");
        new SafetensorsWriter().order(SafetensorsWriter.TensorOrder.REFERENCE).add("attn.0", SafetensorsDType.F32, new long[] {1, 2, 3}, MemorySegment.ofArray(data)).write(p);
        assertArrayEquals(expected("{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}", data), Files.readAllBytes(p));

        new SafetensorsWriter().add("attn0", SafetensorsDType.F32, new long[] {1, 1, 2, 3}, MemorySegment.ofArray(data)).write(p);
        assertArrayEquals(expected("{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ", data), Files.readAllBytes(p));

        new SafetensorsWriter().write(p);
        assertArrayEquals(expected("{}      ", new byte[0]), Files.readAllBytes(p));

        new SafetensorsWriter().metadata("framework", "pt").write(p);
        assertArrayEquals(expected("{\"__metadata__\":{\"framework\":\"pt\"}}     ", new byte[0]), Files.readAllBytes(p));
    }

    @Test void referenceOrderSortsByDtypeAlignmentThenName() {
        SafetensorsWriter w = new SafetensorsWriter().order(SafetensorsWriter.TensorOrder.REFERENCE).metadata("format", "pt");
        w.add("b", SafetensorsDType.U8, new long[] {3}, MemorySegment.ofArray(new byte[3]));
        w.add("c", SafetensorsDType.F32, new long[] {1}, MemorySegment.ofArray(new byte[4]));
        w.add("a", SafetensorsDType.F32, new long[] {1}, MemorySegment.ofArray(new byte[4]));
        w.add("d", SafetensorsDType.I64, new long[] {1}, MemorySegment.ofArray(new byte[8]));
        w.add("e", SafetensorsDType.BF16, new long[] {1}, MemorySegment.ofArray(new byte[2]));
        SafetensorsHeader h = w.header();
        assertEquals(List.of("d", "a", "c", "e", "b"), h.entries().stream().map(SafetensorsHeader.Entry::name).toList());
        assertTrue(new String(h.encode(), StandardCharsets.UTF_8).startsWith("{\"__metadata__\":{\"format\":\"pt\"},\"d\":"));
    }

    @Test void everyDtypeRoundTrips() throws IOException {
        Random rnd = new Random(1);
        SafetensorsWriter w = new SafetensorsWriter().metadata(Map.of("format", "pt", "note", "synthetic \u00e9"));
        Map<String, byte[]> written = new java.util.LinkedHashMap<>();
        List<long[]> shapes = List.of(new long[] {3, 5}, new long[] {7}, new long[] {}, new long[] {2, 0, 4}, new long[] {2, 3, 1});
        int i = 0;
        for (SafetensorsDType dt : SafetensorsDType.values()) {
            long[] shape = shapes.get(i++ % shapes.size());
            byte[] bytes = new byte[(int) SafetensorsTensor.byteSizeOf(dt, shape)];
            rnd.nextBytes(bytes);
            String name = "t." + dt.name().toLowerCase();
            w.add(name, dt, shape, MemorySegment.ofArray(bytes));
            written.put(name, bytes);
        }
        Path p = tmp.resolve("all.safetensors");
        w.write(p);
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertEquals(0, f.dataOffset() % 8, "data section 8-aligned");
            assertEquals(new ArrayList<>(written.keySet()), f.tensorNames());
            assertEquals("synthetic \u00e9", f.metadata().get("note"));
            i = 0;
            for (SafetensorsDType dt : SafetensorsDType.values()) {
                SafetensorsTensor t = f.tensor("t." + dt.name().toLowerCase());
                assertEquals(dt, t.dtype());
                assertArrayEquals(shapes.get(i++ % shapes.size()), t.shape());
                assertArrayEquals(written.get(t.name()), t.data().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), t.name());
            }
        }
    }

    @Test void tensorDataAndFloatsRoundTrip() throws IOException {
        float[] v = {1.5f, -2.25f, 3e-5f, 65504f, -0f, 7f};
        float[] bf = {1.5f, -2.25f, 0.1f, 1e30f, -0f, 7f};
        MemorySegment f16 = MemorySegment.ofArray(new byte[12]);
        MemorySegment b16 = MemorySegment.ofArray(new byte[12]);
        for (int i = 0; i < 6; i++) {
            f16.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * i, Float.floatToFloat16(v[i]));
            b16.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * i, (short) (Float.floatToRawIntBits(bf[i]) >>> 16));
        }
        Path p = tmp.resolve("f.safetensors");
        new SafetensorsWriter()
                .add("f32", new long[] {2, 3}, v)
                .add("f16", new TensorData("x", GgmlType.F16, new long[] {3, 2}, f16))
                .add("bf16", SafetensorsDType.BF16, new long[] {2, 3}, b16)
                .write(p);
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertArrayEquals(v, f.tensor("f32").toFloatArray());
            assertArrayEquals(new long[] {2, 3}, f.tensor("f16").shape());
            float[] h = f.tensor("f16").toFloatArray();
            for (int i = 0; i < 6; i++) assertEquals(Float.float16ToFloat(Float.floatToFloat16(v[i])), h[i]);
            float[] b = f.tensor("bf16").toFloatArray();
            for (int i = 0; i < 6; i++) assertEquals(Float.intBitsToFloat(Float.floatToRawIntBits(bf[i]) & 0xffff0000), b[i]);
            TensorData td = f.tensor("bf16").toTensorData("blk.0.x");
            assertEquals(GgmlType.BF16, td.type());
            assertArrayEquals(new long[] {3, 2}, td.shape());
        }
    }

    @Test void streamingSourceMustWriteExactlyItsSize() throws IOException {
        Path p = tmp.resolve("s.safetensors");
        SafetensorsWriter ok = new SafetensorsWriter().add("s", SafetensorsDType.I32, new long[] {4}, 16,
                out -> out.write(ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 1).putInt(4, 2).putInt(8, 3).putInt(12, 4)));
        ok.write(p);
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertEquals(3, f.tensor("s").data().get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, 8));
        }
        Path bad = tmp.resolve("bad.safetensors");
        SafetensorsWriter w = new SafetensorsWriter().add("s", SafetensorsDType.I32, new long[] {4}, 16, out -> out.write(ByteBuffer.allocate(12)));
        IOException e = assertThrows(IOException.class, () -> w.write(bad));
        assertTrue(e.getMessage().contains("wrote 12 bytes, expected 16"), e.getMessage());
        assertFalse(Files.exists(bad));
        try (var files = Files.list(tmp)) {
            assertEquals(1, files.count(), "no temporary file left behind");
        }
    }

    @Test void rejectsBadTensors() {
        SafetensorsWriter w = new SafetensorsWriter().add("a", new long[] {1}, new float[] {1});
        assertThrows(IllegalArgumentException.class, () -> w.add("a", new long[] {1}, new float[] {1}));
        assertThrows(IllegalArgumentException.class, () -> w.add("__metadata__", new long[] {1}, new float[] {1}));
        assertThrows(IllegalArgumentException.class, () -> w.add("b", new long[] {2}, new float[] {1}));
        assertThrows(IllegalArgumentException.class, () -> w.add("q", new TensorData("q", GgmlType.Q8_0, new long[] {32}, MemorySegment.ofArray(new byte[34]))));
    }
}
