package io.modelopt.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Off a terminal the bar writes plain lines: one per started stage, one per tenth, one at the end; no carriage returns. */
class ProgressBarTest {
    @Test
    void plainLinesWhenNotATerminal() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        ProgressBar bar = new ProgressBar(new PrintStream(buf, true, StandardCharsets.UTF_8), false);
        for (int i = 0; i <= 1000; i++) bar.onProgress("quantize", i, 1000);
        bar.onProgress("write", 5, 0);
        String text = buf.toString(StandardCharsets.UTF_8);
        assertTrue(text.indexOf('\r') < 0, text);
        String[] lines = text.split("\n");
        assertEquals(12, lines.length, text); // 0%, 10% .. 100%, then the unsized stage
        assertTrue(lines[10].startsWith("quantize 1000/1000 (100%)"), lines[10]);
        assertTrue(lines[11].startsWith("write 5"), lines[11]);
    }
}
