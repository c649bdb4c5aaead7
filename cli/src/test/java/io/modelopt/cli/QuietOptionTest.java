package io.modelopt.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --quiet} is accepted by every command, and silences progress. */
class QuietOptionTest {
    @org.junit.jupiter.api.AfterEach
    void drawAgain() { ProgressBar.unsilence(); } // the other tests of this JVM expect bars
    @Test
    void aCommandWithoutItsOwnQuietOptionAcceptsIt(@TempDir Path dir) {
        Path out = dir.resolve("micro.gguf");
        ByteArrayOutputStream o = new ByteArrayOutputStream(), e = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"synth", "--preset", "micro", "--type", "f32", "--out", out.toString(), "--quiet"},
                new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        String err = e.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, err);
        assertTrue(Files.isRegularFile(out));
        assertFalse(err.contains("unknown option"), err);
        assertFalse(err.contains("%"), "no progress lines: " + err);
    }

    @Test
    void helpListsTheGlobalOption() {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        Main.run(new String[] {"--help"}, new PrintStream(o, true, StandardCharsets.UTF_8), System.err);
        assertTrue(o.toString(StandardCharsets.UTF_8).contains("--quiet"));
    }
}
