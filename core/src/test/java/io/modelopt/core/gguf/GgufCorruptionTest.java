package io.modelopt.core.gguf;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.core.testing.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Malformed input must end in a {@link ModelFormatException} (or load, where the damage is
 * harmless) — never another exception, an OutOfMemoryError or a hang.
 */
class GgufCorruptionTest {
    private static final Duration LOOP_LIMIT = Duration.ofSeconds(20);
    @TempDir Path tmp;

    /**
     * Opens {@code p} as a model and touches everything a loader would. Returns normally or throws
     * {@link ModelFormatException}; anything else fails the test with the cause.
     */
    private static boolean loads(Path p, String what) {
        try (GgufModelSource m = GgufModelSource.open(p)) {
            m.metadata();
            m.vocabulary();
            for (TensorData t : m.tensors().values()) {
                if (t.byteSize() > 0) t.data().get(ValueLayout.JAVA_BYTE, t.byteSize() - 1);
            }
            return true;
        } catch (ModelFormatException expected) {
            return false;
        } catch (Throwable other) {
            throw new AssertionError(what + ": " + other, other);
        }
    }

    private static long lastTensorEnd(Path p) {
        try (GgufFile f = GgufFile.open(p)) {
            long end = 0;
            for (GgufTensorInfo t : f.tensorInfos()) end = Math.max(end, t.offset() + t.byteSize());
            return f.dataOffset() + end;
        }
    }

    private static long dataOffset(Path p) {
        try (GgufFile f = GgufFile.open(p)) {
            return f.dataOffset();
        }
    }

    /** 300 seeded truncations: each one that cuts into tensor data or the header must be rejected. */
    @ParameterizedTest
    @ValueSource(strings = {"stories260K/gguf/stories260K-q4_0.gguf", "brown-llama/gguf/brown-llama-q8_0.gguf"})
    void randomTruncations(String fixture) throws IOException {
        Path src = Fixtures.file(fixture);
        long mustFailBelow = lastTensorEnd(src);
        long header = dataOffset(src);
        long size = Files.size(src);
        Random rnd = new Random(fixture.hashCode());
        // 80 % of cuts land in the header (where parsing happens), the rest anywhere; cut in descending order
        long[] cuts = new long[300];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = rnd.nextInt(5) == 0 ? (long) (rnd.nextDouble() * size) : (long) (rnd.nextDouble() * (header + 64));
        }
        java.util.Arrays.sort(cuts);
        Path p = tmp.resolve("trunc.gguf");
        Files.copy(src, p);
        assertTimeoutPreemptively(LOOP_LIMIT, () -> {
            int rejected = 0;
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                for (int i = cuts.length - 1; i >= 0; i--) {
                    ch.truncate(cuts[i]);
                    boolean ok = loads(p, "truncated at " + cuts[i]);
                    if (ok && cuts[i] < mustFailBelow) fail("truncation at " + cuts[i] + " (tensor data ends at " + mustFailBelow + ") was accepted");
                    if (!ok) rejected++;
                }
            }
            assertTrue(rejected > 250, "rejected " + rejected);
        });
    }

    /** Several hundred seeded byte changes in the header, metadata and tensor infos (and a few in the data). */
    @ParameterizedTest
    @ValueSource(strings = {"stories260K/gguf/stories260K-q4_0.gguf", "brown-llama/gguf/brown-llama-q8_0.gguf"})
    void randomByteFlips(String fixture) throws IOException {
        Path src = Fixtures.file(fixture);
        long header = dataOffset(src);
        long size = Files.size(src);
        Path p = tmp.resolve("flip.gguf");
        Files.copy(src, p);
        Random rnd = new Random(fixture.hashCode() * 31L + 7);
        assertTimeoutPreemptively(LOOP_LIMIT, () -> {
            int rejected = 0;
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                for (int i = 0; i < 400; i++) {
                    // mostly the first bytes (magic, version, counts, first keys), then anywhere in the header, a few in the data
                    int r = rnd.nextInt(10);
                    long at = r < 3 ? rnd.nextInt(64) : r < 9 ? (long) (rnd.nextDouble() * header) : header + (long) (rnd.nextDouble() * (size - header));
                    int n = 1 + rnd.nextInt(r == 0 ? 8 : 2);
                    n = (int) Math.min(n, size - at);
                    ByteBuffer orig = ByteBuffer.allocate(n);
                    ch.read(orig, at);
                    ByteBuffer bad = ByteBuffer.allocate(n);
                    for (int k = 0; k < n; k++) {
                        int kind = rnd.nextInt(4);
                        byte b = orig.get(k);
                        bad.put(switch (kind) {
                            case 0 -> (byte) (b ^ (1 << rnd.nextInt(8)));
                            case 1 -> (byte) 0xFF;
                            case 2 -> (byte) 0x7F;
                            default -> (byte) rnd.nextInt(256);
                        });
                    }
                    ch.write(bad.flip(), at);
                    if (!loads(p, "bytes changed at " + at)) rejected++;
                    ch.write(orig.flip(), at);
                }
            }
            assertTrue(rejected > 50, "rejected only " + rejected + " of 400");
            assertTrue(loads(p, "restored"));
        });
    }

    // ---- targeted cases ---------------------------------------------------------------------

    /** A little-endian byte builder for hand-made (broken) GGUF files. */
    private static final class Raw {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Raw bytes(byte... b) { out.writeBytes(b); return this; }
        Raw u8(int v) { out.write(v); return this; }
        Raw u32(long v) { return bytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array()); }
        Raw u64(long v) { return bytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array()); }
        Raw str(String s) { byte[] b = s.getBytes(StandardCharsets.UTF_8); u64(b.length); return bytes(b); }
        Raw header(int version, long nTensors, long nKv) { bytes("GGUF".getBytes(StandardCharsets.US_ASCII)); u32(version); u64(nTensors); return u64(nKv); }
        Raw tensor(String name, int type, long offset, long... dims) {
            str(name);
            u32(dims.length);
            for (long d : dims) u64(d);
            u32(type);
            return u64(offset);
        }
        Raw padTo(int alignment) { while (out.size() % alignment != 0) u8(0); return this; }
        Raw zeros(int n) { return bytes(new byte[n]); }
    }

    private String failure(Raw raw) throws IOException {
        Path p = tmp.resolve("case-" + System.nanoTime() + ".gguf");
        Files.write(p, raw.out.toByteArray());
        ModelFormatException e = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertThrows(ModelFormatException.class, () -> {
            try (GgufFile f = GgufFile.open(p)) {
                f.metadata();
            }
        }));
        assertTrue(e.getMessage().startsWith(p.toString()), "names the file: " + e.getMessage());
        return e.getMessage();
    }

    private void assertFails(Raw raw, String... fragments) throws IOException {
        String msg = failure(raw);
        for (String f : fragments) assertTrue(msg.contains(f), "expected '" + f + "' in: " + msg);
    }

    @Test
    void fileProblems() throws IOException {
        assertFails(new Raw().bytes("GGML".getBytes(StandardCharsets.US_ASCII)).u32(3).u64(0).u64(0), "not a GGUF file", "'GGML'");
        assertFails(new Raw().bytes((byte) 'G', (byte) 'G'), "too short for the magic");
        assertFails(new Raw().header(1, 0, 0), "version 1 is not supported");
        assertFails(new Raw().header(4, 0, 0), "version 4 is newer");
        assertFails(new Raw().bytes("GGUF".getBytes(StandardCharsets.US_ASCII)).bytes((byte) 0, (byte) 0, (byte) 0, (byte) 3).u64(0).u64(0),
                "byte-swapped", "big-endian");
        assertFails(new Raw().bytes("GGUF".getBytes(StandardCharsets.US_ASCII)).u32(3).u32(0), "unexpected end of file reading tensor count");
    }

    @Test
    void countsAndLengthsBeyondTheFile() throws IOException {
        assertFails(new Raw().header(3, 0, 1).str("a").u32(9).u32(0).u64(1L << 60),
                "@ offset 41", "array 'a' claims 1152921504606846976 elements of UINT8", "bytes are left");
        assertFails(new Raw().header(3, 0, 1).str("a").u32(9).u32(8).u64(-1L), "array 'a' claims 18446744073709551615 elements");
        assertFails(new Raw().header(3, 0, 1).str("s").u32(8).u64(1000).bytes((byte) 'x', (byte) 'y', (byte) 'z'),
                "string length 1000 of value of 's' exceeds the 3 bytes left");
        assertFails(new Raw().header(3, 0, 1).u64(1L << 62).zeros(16), "string length 4611686018427387904 of key of metadata entry 0");
        assertFails(new Raw().header(3, 1L << 40, 0), "tensor count 1099511627776 cannot fit");
        assertFails(new Raw().header(3, -1, 0), "tensor count 18446744073709551615 cannot fit");
        assertFails(new Raw().header(3, 0, 1L << 50), "metadata count 1125899906842624 cannot fit");
        assertFails(new Raw().header(3, 0, 2).str("k").u32(4).u32(7).u64(100).u8(0), "string length 100 of key of metadata entry 1 exceeds the 1 bytes left");
        assertFails(new Raw().header(3, 0, 2).str("k").u32(4).u32(7).u64(1).bytes((byte) 109, (byte) 9, (byte) 0), "unexpected end of file reading type of key 'm'");
    }

    @Test
    void metadataProblems() throws IOException {
        assertFails(new Raw().header(3, 0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2), "duplicate metadata key 'k'");
        assertFails(new Raw().header(3, 0, 1).str("k").u32(13).u32(1), "key 'k' has invalid GGUF value type 13");
        assertFails(new Raw().header(3, 0, 1).str("k").u32(9).u32(77).u64(0), "array 'k' has invalid element type 77");
        Raw deep = new Raw().header(3, 0, 1).str("k").u32(9);
        for (int i = 0; i < 9; i++) deep.u32(9).u64(1);
        deep.u32(0).u64(0).zeros(64);
        assertFails(deep, "nests arrays deeper than 8");
        assertFails(new Raw().header(3, 0, 1).str("general.alignment").u32(4).u32(48), "general.alignment = 48 is not a non-zero power of two");
        assertFails(new Raw().header(3, 0, 1).str("general.alignment").u32(4).u32(0), "general.alignment = 0");
        assertFails(new Raw().header(3, 0, 1).str("general.alignment").u32(5).u32(32), "general.alignment must be a UINT32, is INT32");
    }

    /** One valid F32[8] tensor file, to vary one field at a time. */
    private static Raw oneTensor(int type, long offset, long... dims) {
        return new Raw().header(3, 1, 0).tensor("w", type, offset, dims).padTo(32).zeros(64);
    }

    @Test
    void tensorInfoProblems() throws IOException {
        // the base case loads
        Path ok = tmp.resolve("ok.gguf");
        Files.write(ok, oneTensor(0, 0, 8).out.toByteArray());
        try (GgufFile f = GgufFile.open(ok)) {
            assertTrue(f.tensor("w").byteSize() == 32);
        }
        assertFails(oneTensor(99, 0, 8), "tensor 'w' has unknown ggml type id 99");
        assertFails(oneTensor(4, 0, 32), "unknown ggml type id 4");
        assertFails(oneTensor(GgmlType.Q4_0.id(), 0, 48), "tensor 'w' of type Q4_0 has ne0 = 48, not a multiple of the block size 32");
        assertFails(new Raw().header(3, 1, 0).str("w").u32(9).zeros(200), "tensor 'w' has n_dims 9, at most 4 allowed");
        assertFails(oneTensor(0, 0, 8, -2), "tensor 'w' dimension 1 is negative: -2");
        assertFails(oneTensor(0, 0, 1L << 32, 1L << 32), "too many elements");
        assertFails(oneTensor(GgmlType.F64.id(), 0, 1L << 62), "byte size overflows");
        assertFails(oneTensor(0, 1L << 20, 8), "tensor 'w' data [1048576, 1048608)", "beyond the end of the file");
        assertFails(oneTensor(0, -32, 8), "data offset 18446744073709551584 is beyond any file");
        assertFails(oneTensor(0, 16, 8), "tensor 'w' data offset 16 is not a multiple of the alignment 32");
        assertFails(oneTensor(0, 0, 64), "beyond the end of the file");
        assertFails(new Raw().header(3, 1, 0).tensor("x".repeat(64), 0, 0, 8).padTo(32).zeros(32), "is too long: 64 bytes");
        assertFails(new Raw().header(3, 2, 0).tensor("w", 0, 0, 8).tensor("w", 0, 32, 8).padTo(32).zeros(64), "duplicate tensor name 'w'");
        assertFails(new Raw().header(3, 2, 0).tensor("a", 0, 0, 16).tensor("b", 0, 32, 8).padTo(32).zeros(128),
                "tensors 'a' [0, 64) and 'b' [32, 64) overlap");
        assertFails(new Raw().header(3, 2, 0).tensor("a", 0, 0, 8).tensor("b", 0, 0, 8).padTo(32).zeros(64), "overlap");
    }

    @Test
    void typedGettersReportTheKey() throws IOException {
        Path p = tmp.resolve("t.gguf");
        new GgufWriter().putString("s", "x").put("ints", GgufValue.intArray(GgufType.UINT32, 1L, 4294967295L)).write(p);
        try (GgufFile f = GgufFile.open(p)) {
            for (var call : List.<Runnable>of(() -> f.getInt("s"), () -> f.getBoolean("s"), () -> f.getFloatArray("s"),
                    () -> f.getStringList("ints"), () -> f.getIntArray("ints"), () -> f.getString("absent"))) {
                ModelFormatException e = assertThrows(ModelFormatException.class, call::run);
                assertTrue(e.getMessage().contains("'s'") || e.getMessage().contains("'ints") || e.getMessage().contains("'absent'"), e.getMessage());
            }
        }
    }
}
