package io.modelopt.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.testing.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** One access line per request with counts and times, and no prompt text unless the options ask for it. */
class AccessLogTest {
    static final String SECRET = "Once upon a zebra named Quillfeather";

    /** Runs one completion and returns what the loggers (slf4j-simple writes to System.err) printed until its access line. */
    static String logOf(boolean logPrompts) throws Exception { return logOf(logPrompts, "{\"prompt\":\"" + SECRET + "\",\"max_tokens\":3}", 1); }

    static String logOf(boolean logPrompts, String body, int times) throws Exception {
        PrintStream saved = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try (TestServer ts = TestServer.start(Fixtures.storiesGguf("f32"), b -> b, o -> o.logPrompts(logPrompts))) {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            for (int i = 0; i < times; i++) Http.post(ts.uri("/v1/completions"), body);
            long deadline = System.nanoTime() + 5_000_000_000L; // the line is written after the response, when the exchange closes
            while (buf.toString(StandardCharsets.UTF_8).split("POST /v1/completions", -1).length <= times && System.nanoTime() < deadline) Thread.sleep(10);
            Thread.sleep(50);
        } finally {
            System.setErr(saved);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    @Test void theAccessLineHasCountsAndTimesButNoPromptText() throws Exception {
        String log = logOf(false);
        assertTrue(log.matches("(?s).*io\\.modelopt\\.server\\.access - #\\d+ POST /v1/completions 200 prompt_tokens=\\d+ completion_tokens=3 ttft=[0-9.]+ms duration=[0-9.]+ms.*"), log);
        assertFalse(log.contains("zebra") || log.contains("Quillfeather"), log);
    }

    @Test void anUnknownFieldIsAcceptedAndLoggedOnce() throws Exception {
        String log = logOf(false, "{\"prompt\":\"Once\",\"max_tokens\":2,\"x_vendor_hint\":{\"a\":1},\"stream_options\":null}", 3);
        assertTrue(log.split("POST /v1/completions 200", -1).length == 4, log);
        assertTrue(log.split("request field 'x_vendor_hint' is not implemented", -1).length == 2, "logged once for three requests: " + log);
    }

    @Test void promptsAreLoggedOnlyWhenAsked() throws Exception {
        assertTrue(logOf(true).contains("prompt: " + SECRET));
    }
}
