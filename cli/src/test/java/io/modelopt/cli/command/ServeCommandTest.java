package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.testing.Fixtures;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The serve command's options; the server itself is tested in the server module, the command end to end by scripts/serve-load.sh. */
class ServeCommandTest {
    @Test void isListedAndDocumentsItsOptions() {
        CliRun help = CliRun.of("--help");
        assertTrue(help.out().contains("serve"), help.out());
        CliRun usage = CliRun.of("serve", "--help");
        for (String o : new String[] {"--host", "--port", "--served-model-name", "--api-key", "--max-num-seqs", "--max-model-len", "--ctx",
                "--kv-cache", "--kv-budget", "--quantize", "--request-timeout", "--chat-template"}) {
            assertTrue(usage.out().contains(o), o + " in\n" + usage.out());
        }
    }

    @Test void badOptionsAreUsageErrorsNamingThem() {
        String model = Fixtures.storiesGguf("f32").toString();
        CliRun noModel = CliRun.of("serve", "--port", "0");
        assertEquals(2, noModel.code());
        assertTrue(noModel.err().contains("--model"), noModel.err());
        CliRun both = CliRun.of("serve", "--model", model, "--ctx", "64", "--max-model-len", "64");
        assertEquals(2, both.code());
        assertTrue(both.err().contains("--max-model-len and --ctx"), both.err());
        CliRun timeout = CliRun.of("serve", "--model", model, "--request-timeout", "soon");
        assertEquals(2, timeout.code());
        assertTrue(timeout.err().contains("--request-timeout"), timeout.err());
        CliRun tooLong = CliRun.of("serve", "--model", model, "--port", "0", "--max-model-len", "100000");
        assertEquals(2, tooLong.code(), tooLong.toString());
        assertTrue(tooLong.err().contains("--max-model-len must be in [2, 128]"), tooLong.err());
        CliRun kv = CliRun.of("serve", "--model", model, "--kv-cache", "int3");
        assertEquals(2, kv.code());
        assertTrue(kv.err().contains("--kv-cache"), kv.err());
    }

    @Test void durationsAndNames() {
        assertEquals(Duration.ofSeconds(600), ServeCommand.duration(io.modelopt.cli.Args.parse(new String[0], java.util.Set.of(), java.util.Set.of()), "t", "600s"));
        for (String[] c : new String[][] {{"500ms", "PT0.5S"}, {"10m", "PT10M"}, {"1h", "PT1H"}, {"90", "PT1M30S"}, {"1.5s", "PT1.5S"}}) {
            var args = io.modelopt.cli.Args.parse(new String[] {"--t", c[0]}, java.util.Set.of("t"), java.util.Set.of());
            assertEquals(Duration.parse(c[1]), ServeCommand.duration(args, "t", "1s"), c[0]);
        }
        assertEquals("stories260K-f32", ServeCommand.defaultName(Path.of("/x/stories260K-f32.gguf")));
        assertEquals("hf", ServeCommand.defaultName(Path.of("/models/hf/")));
    }
}
