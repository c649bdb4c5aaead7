package io.modelopt.quantization.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.testing.Fixtures;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The legacy imatrix file: the fixture, a hand-written file, and corrupt ones. */
class ImatrixFileTest {
    @TempDir Path tmp;

    /** An imatrix file: entries (name, ncall, values), then optionally the chunk count and dataset. */
    static byte[] imatrix(Object[][] entries, Integer chunks, String dataset) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(entries.length);
        for (Object[] e : entries) {
            byte[] name = ((String) e[0]).getBytes(StandardCharsets.UTF_8);
            b.putInt(name.length).put(name).putInt((Integer) e[1]);
            float[] v = (float[]) e[2];
            b.putInt(v.length);
            for (float f : v) b.putFloat(f);
        }
        if (chunks != null) {
            byte[] d = dataset.getBytes(StandardCharsets.UTF_8);
            b.putInt(chunks).putInt(d.length).put(d);
        }
        out.write(b.array(), 0, b.position());
        return out.toByteArray();
    }

    @Test
    void readsTheFixture() {
        ImatrixFile m = ImatrixFile.read(Fixtures.file(LlamaQuantizeFixturesTest.IMATRIX));
        // 4 layers x 7 matrices; llama-imatrix skips output.weight by default and the token embedding is a lookup
        assertEquals(28, m.entryCount());
        assertTrue(m.weights("output.weight").isEmpty());
        assertEquals(128, m.calls().get("blk.2.ffn_up.weight"));
        assertEquals(128, m.chunkCount());
        assertEquals("corpora/brown/train.txt", m.dataset().orElseThrow());
        assertEquals(256, m.weights("blk.0.attn_q.weight").orElseThrow().length);
        assertEquals(768, m.weights("blk.3.ffn_down.weight").orElseThrow().length);
        assertTrue(m.weights("token_embd.weight").isEmpty());
        for (float[] w : m.weights().values()) for (float f : w) assertTrue(f >= 0 && Float.isFinite(f));
    }

    @Test
    void valuesAreDividedByTheCallCount() {
        byte[] f = imatrix(new Object[][] {{"a.weight", 4, new float[] {2f, 6f, 1f}}, {"b.weight", 0, new float[] {3f}}}, 17, "data.txt");
        ImatrixFile m = ImatrixFile.parse(Path.of("t.imatrix"), f);
        assertEquals(2, m.entryCount());
        assertEquals(Arrays.toString(new float[] {0.5f, 1.5f, 0.25f}), Arrays.toString(m.weights("a.weight").orElseThrow()));
        assertEquals(3f, m.weights("b.weight").orElseThrow()[0]);
        assertEquals(4, m.calls().get("a.weight"));
        assertEquals(17, m.chunkCount());
        assertEquals("data.txt", m.dataset().orElseThrow());
        // without the trailer (older files)
        ImatrixFile old = ImatrixFile.parse(Path.of("t.imatrix"), imatrix(new Object[][] {{"a.weight", 1, new float[] {1f}}}, null, null));
        assertEquals(0, old.chunkCount());
        assertTrue(old.dataset().isEmpty());
    }

    private static String fail(byte[] bytes) {
        return assertThrows(ModelFormatException.class, () -> ImatrixFile.parse(Path.of("bad.imatrix"), bytes)).getMessage();
    }

    @Test
    void corruptFilesFailWithClearMessages() throws Exception {
        byte[] good = imatrix(new Object[][] {{"a.weight", 2, new float[] {2f, 6f}}}, 3, "d.txt");
        assertTrue(fail(new byte[0]).contains("truncated"), fail(new byte[0]));
        assertTrue(fail(new byte[] {0, 0, 0, 0}).contains("no data in imatrix file"));
        // every truncation point fails, naming the file
        int entriesEnd = 4 + 4 + 8 + 4 + 4 + 2 * 4; // a file may end after its entries (older format)
        for (int cut = 1; cut < good.length; cut++) {
            if (cut == entriesEnd) continue;
            String msg = fail(Arrays.copyOf(good, cut));
            assertTrue(msg.contains("bad.imatrix"), msg);
        }
        byte[] bigName = good.clone();
        ByteBuffer.wrap(bigName).order(ByteOrder.LITTLE_ENDIAN).putInt(4, 1 << 30);
        assertTrue(fail(bigName).contains("name length 1073741824"), fail(bigName));
        byte[] noValues = imatrix(new Object[][] {{"a.weight", 2, new float[0]}}, null, null);
        assertTrue(fail(noValues).contains("entry 'a.weight': 0 values"), fail(noValues));
        byte[] nan = imatrix(new Object[][] {{"a.weight", 1, new float[] {1f, Float.NaN}}}, null, null);
        assertTrue(fail(nan).contains("entry 'a.weight' value 1 is not finite"), fail(nan));
        byte[] trailing = Arrays.copyOf(good, good.length + 3);
        assertTrue(fail(trailing).contains("unexpected bytes"), fail(trailing));
        Path missing = tmp.resolve("missing.imatrix");
        assertThrows(java.io.UncheckedIOException.class, () -> ImatrixFile.read(missing));
        Files.write(tmp.resolve("x.imatrix"), good);
        assertEquals(1, ImatrixFile.read(tmp.resolve("x.imatrix")).entryCount());
    }
}
