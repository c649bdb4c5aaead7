package io.modelopt.server;

import io.modelopt.core.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A server-sent-event response: {@code data: {...}\n\n} per event, flushed at once so that each
 * token leaves as it is made (and {@code curl -w '%{time_starttransfer}'} measures the first one),
 * ended by {@code data: [DONE]}. A failed write means the client left: {@link Call.ClientGone}.
 */
final class SseStream {
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream out;
    private final Call call;

    SseStream(OutputStream out, Call call) {
        this.out = out;
        this.call = call;
    }

    void send(Object event) { write(("data: " + Json.write(event) + "\n\n").getBytes(StandardCharsets.UTF_8)); }

    void done() { write(DONE); }

    private void write(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new Call.ClientGone(e);
        }
    }

    Call call() { return call; }
}
