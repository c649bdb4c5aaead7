package io.modelopt.core.safetensors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged copies of a real safetensors file either load (with tensors that satisfy every invariant)
 * or throw {@link ModelFormatException} — never another exception, an OutOfMemoryError or a crash.
 */
class SafetensorsCorruptionTest {
    @TempDir Path tmp;

    private int loaded, rejected;

    private void check(Path file, byte[] bytes, String what) throws IOException {
        Files.write(file, bytes);
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            long covered = 0;
            for (SafetensorsTensor t : f.tensors().values()) covered += t.byteSize();
            assertEquals(bytes.length - f.dataOffset(), covered, what);
            loaded++;
        } catch (ModelFormatException e) {
            assertTrue(e.getMessage().contains(file.toString()), what + ": message does not name the file: " + e.getMessage());
            rejected++;
        } catch (Throwable t) {
            fail(what + ": unexpected " + t, t);
        }
    }

    @Test void randomTruncationsAreRejected() throws IOException {
        byte[] original = Files.readAllBytes(Fixtures.file("stories260K/hf/model.safetensors"));
        Random rnd = new Random(20240607);
        Path file = tmp.resolve("cut.safetensors");
        for (int i = 0; i < 200; i++) {
            // half of the cuts inside the 8-byte length or the header, half in the data
            int len = i % 2 == 0 ? rnd.nextInt(8 + 4936 + 8) : rnd.nextInt(original.length);
            check(file, Arrays.copyOf(original, len), "truncated to " + len);
        }
        assertEquals(200, rejected, "every truncation must be rejected");
    }

    @Test void randomHeaderByteFlipsLoadOrAreRejected() throws IOException {
        byte[] original = Files.readAllBytes(Fixtures.file("stories260K/hf/model.safetensors"));
        int headerEnd = 8 + 4936;
        Random rnd = new Random(42);
        Path file = tmp.resolve("flip.safetensors");
        for (int i = 0; i < 400; i++) {
            byte[] b = original.clone();
            int flips = 1 + rnd.nextInt(3);
            StringBuilder what = new StringBuilder("flips at");
            for (int k = 0; k < flips; k++) {
                int at = rnd.nextInt(headerEnd);
                b[at] ^= (byte) (1 << rnd.nextInt(8));
                what.append(' ').append(at);
            }
            check(file, b, what.toString());
        }
        assertEquals(400, loaded + rejected);
        assertTrue(rejected > 300, "most header flips must be caught, got " + rejected); // seed 42: 344 of 400
    }

    @Test void randomDataFlipsStillLoad() throws IOException {
        byte[] original = Files.readAllBytes(Fixtures.file("brown-llama/hf/model.safetensors"));
        Random rnd = new Random(7);
        Path file = tmp.resolve("data.safetensors");
        for (int i = 0; i < 5; i++) {
            byte[] b = original.clone();
            int at = 8 + 4176 + rnd.nextInt(b.length - 8 - 4176);
            b[at] ^= (byte) 0x5a;
            check(file, b, "data flip at " + at);
        }
        assertEquals(5, loaded, "the data section is not checksummed: flips there load");
    }
}
