package io.modelopt.core.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsFileTest {
    @TempDir Path tmp;

    /** A safetensors file assembled by hand: length prefix, header text exactly as given, data. */
    static byte[] raw(String header, byte[] data) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h).put(data);
        return b.array();
    }

    private Path write(byte[] bytes) throws IOException {
        Path p = tmp.resolve("t" + System.nanoTime() + ".safetensors");
        Files.write(p, bytes);
        return p;
    }

    private ModelFormatException fails(byte[] bytes) throws IOException {
        Path p = write(bytes);
        return assertThrows(ModelFormatException.class, () -> SafetensorsFile.open(p).close());
    }

    private static void assertMentions(Exception e, String... parts) {
        for (String p : parts) assertTrue(e.getMessage().contains(p), () -> "message '" + e.getMessage() + "' does not mention '" + p + "'");
    }

    @Test void readsStoriesFixture() throws IOException {
        Path file = Fixtures.file("stories260K/hf/model.safetensors");
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            assertEquals(48, f.tensors().size());
            assertEquals(Map.of("format", "pt"), f.metadata());
            assertEquals(SafetensorsHeader.MetadataPosition.LAST, f.header().metadataPosition());
            assertEquals(0, f.dataOffset() % 8);
            assertEquals(Files.size(file) - f.dataOffset(), f.header().dataSize());
            assertEquals("model.embed_tokens.weight", f.tensorNames().getFirst());
            for (SafetensorsTensor t : f.tensors().values()) assertEquals(SafetensorsDType.F32, t.dtype(), t.name());
            assertArrayEquals(new long[] {512, 64}, f.tensor("model.embed_tokens.weight").shape());
            assertArrayEquals(new long[] {512, 64}, f.tensor("lm_head.weight").shape());
            assertArrayEquals(new long[] {64, 64}, f.tensor("model.layers.0.self_attn.q_proj.weight").shape());
            assertArrayEquals(new long[] {32, 64}, f.tensor("model.layers.4.self_attn.k_proj.weight").shape());
            assertArrayEquals(new long[] {32, 64}, f.tensor("model.layers.2.self_attn.v_proj.weight").shape());
            assertArrayEquals(new long[] {172, 64}, f.tensor("model.layers.1.mlp.gate_proj.weight").shape());
            assertArrayEquals(new long[] {64, 172}, f.tensor("model.layers.3.mlp.down_proj.weight").shape());
            assertArrayEquals(new long[] {64}, f.tensor("model.norm.weight").shape());
            // README: lm_head.weight was written equal to embed_tokens (tied classifier)
            assertEquals(-1, f.tensor("lm_head.weight").data().mismatch(f.tensor("model.embed_tokens.weight").data()));
            // zero-copy: slices of one mapping
            SafetensorsTensor emb = f.tensor("model.embed_tokens.weight");
            assertTrue(emb.data().isMapped());
            float first = emb.toFloatArray()[0];
            ByteBuffer direct = ByteBuffer.wrap(readBytes(file, f.dataOffset(), 4)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(direct.getFloat(), first);
        }
    }

    @Test void readsBrownFixture() {
        try (SafetensorsFile f = SafetensorsFile.open(Fixtures.file("brown-llama/hf/model.safetensors"))) {
            assertEquals(39, f.tensors().size());
            assertArrayEquals(new long[] {4096, 256}, f.tensor("model.embed_tokens.weight").shape());
            assertArrayEquals(new long[] {128, 256}, f.tensor("model.layers.3.self_attn.k_proj.weight").shape());
            assertArrayEquals(new long[] {256, 768}, f.tensor("model.layers.0.mlp.down_proj.weight").shape());
            assertArrayEquals(new long[] {4096, 256}, f.tensor("lm_head.weight").shape());
            long params = f.tensors().values().stream().mapToLong(SafetensorsTensor::elementCount).sum();
            assertEquals(5_245_184, params); // README: 5,245,184 parameters
            TensorData td = f.tensorData("model.layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight");
            assertEquals(GgmlType.F32, td.type());
            assertArrayEquals(new long[] {768, 256}, td.shape());
        }
    }

    private static byte[] readBytes(Path file, long offset, int n) {
        try (var ch = java.nio.channels.FileChannel.open(file)) {
            ByteBuffer b = ByteBuffer.allocate(n);
            ch.read(b, offset);
            return b.array();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test void closeUnmaps() throws IOException {
        Path p = write(raw("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", new byte[8]));
        SafetensorsFile f = SafetensorsFile.open(p);
        SafetensorsTensor a = f.tensor("a");
        assertEquals(0f, a.data().get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4));
        f.close();
        f.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> a.data().get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, f::tensors);
    }

    @Test void emptyFileAndScalarsAndZeroSizedTensors() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(write(raw("{}      ", new byte[0])))) {
            assertTrue(f.tensors().isEmpty());
            assertTrue(f.metadata().isEmpty());
        }
        String h = "{\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,8]},\"z\":{\"dtype\":\"I32\",\"shape\":[0,5],\"data_offsets\":[8,8]}}";
        byte[] data = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(2.5).array();
        try (SafetensorsFile f = SafetensorsFile.open(write(raw(h, data)))) {
            assertEquals(1, f.tensor("s").elementCount());
            assertEquals(2.5f, f.tensor("s").toFloatArray()[0]);
            assertArrayEquals(new long[] {1}, f.tensor("s").toTensorData().shape());
            assertEquals(0, f.tensor("z").byteSize());
        }
    }

    // ---------------------------------------------------------------- targeted corruption

    private static final String ONE = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";

    @Test void tooShortForLength() throws IOException {
        assertMentions(fails(new byte[5]), "too short");
    }

    @Test void headerLengthBeyondFile() throws IOException {
        byte[] b = raw(ONE, new byte[16]);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, b.length); // > file - 8
        ModelFormatException e = fails(b);
        assertMentions(e, "header length " + b.length, "past the end of the file");
        assertEquals(0, e.offset());
    }

    @Test void headerLengthBeyondLimit() throws IOException {
        byte[] b = raw(ONE, new byte[16]);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, -1L);
        assertMentions(fails(b), "18446744073709551615", "exceeds the limit");
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 100_000_001L);
        assertMentions(fails(b), "100000001", "exceeds the limit");
    }

    @Test void dataOffsetsPastEof() throws IOException {
        assertMentions(fails(raw(ONE, new byte[12])), "tensor 'a'", "[0,16)", "past the end of the data section");
    }

    @Test void overlap() throws IOException {
        String h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
        assertMentions(fails(raw(h, new byte[12])), "'a'", "'b'", "overlap");
    }

    @Test void hole() throws IOException {
        String h = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}";
        assertMentions(fails(raw(h, new byte[20])), "hole of 4 bytes", "'b'");
    }

    @Test void trailingBytes() throws IOException {
        assertMentions(fails(raw(ONE, new byte[20])), "4 trailing bytes");
    }

    @Test void unknownDtype() throws IOException {
        assertMentions(fails(raw(ONE.replace("F32", "Q4_K"), new byte[16])), "tensor 'a'", "unknown dtype 'Q4_K'");
        assertMentions(fails(raw(ONE.replace("F32", "f32"), new byte[16])), "unknown dtype 'f32'");
    }

    @Test void shapeOffsetMismatch() throws IOException {
        assertMentions(fails(raw(ONE.replace("[2,2]", "[2,3]"), new byte[16])), "tensor 'a'", "needs 24 bytes", "span 16");
    }

    @Test void shapeOverflow() throws IOException {
        String h = ONE.replace("[2,2]", "[4294967296,4294967296]");
        assertMentions(fails(raw(h, new byte[16])), "tensor 'a'", "overflows");
    }

    @Test void malformedEntries() throws IOException {
        assertMentions(fails(raw(ONE.replace("[0,16]", "[0,16,32]"), new byte[16])), "'data_offsets' must have 2 entries");
        assertMentions(fails(raw(ONE.replace("[2,2]", "[2,-2]"), new byte[16])), "non-negative integers");
        assertMentions(fails(raw(ONE.replace("[2,2]", "[2,2.0]"), new byte[16])), "non-negative integers");
        assertMentions(fails(raw(ONE.replace("[0,16]", "[16,0]"), new byte[16])), "end before they begin");
        assertMentions(fails(raw(ONE.replace("\"dtype\":\"F32\",", ""), new byte[16])), "'dtype' must be a string");
        assertMentions(fails(raw("{\"a\":[1,2]}", new byte[0])), "tensor 'a'", "expected an object");
        assertMentions(fails(raw("{\"__metadata__\":{\"k\":1}}", new byte[0])), "__metadata__", "must be a string");
        assertMentions(fails(raw("[1,2]", new byte[0])), "not valid JSON");
    }

    @Test void badJsonNamesTheOffset() throws IOException {
        ModelFormatException e = fails(raw("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]", new byte[16]));
        assertMentions(e, "not valid JSON");
        assertTrue(e.offset() >= 8, "offset " + e.offset());
    }

    @Test void invalidUtf8() throws IOException {
        byte[] b = raw("{\"a\u00e9\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", new byte[16]);
        b[12] = (byte) 0xff;
        assertMentions(fails(b), "not valid UTF-8");
    }

    @Test void metadataAndUtf8Names() throws IOException {
        String h = "{\"__metadata__\":{\"format\":\"pt\",\"x\":\"y\"},\"t\u00e9\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}";
        try (SafetensorsFile f = SafetensorsFile.open(write(raw(h, new byte[] {1, 2, 3})))) {
            assertEquals(List.of("format", "x"), List.copyOf(f.metadata().keySet()));
            assertEquals(SafetensorsHeader.MetadataPosition.FIRST, f.header().metadataPosition());
            SafetensorsTensor t = f.tensor("t\u00e9");
            assertEquals(SafetensorsDType.U8, t.dtype());
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> f.tensorData("t\u00e9", "x"));
            assertMentions(e, "U8", "no ggml equivalent");
            assertMentions(assertThrows(ModelFormatException.class, () -> f.tensor("nope")), "no tensor named 'nope'");
        }
    }
}
