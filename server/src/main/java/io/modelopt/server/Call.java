package io.modelopt.server;

import com.sun.net.httpserver.HttpExchange;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One HTTP exchange as the endpoints see it: the bounded body, JSON and error responses, the
 * switch to a server-sent-event stream, and what the access line reports (status, tokens, TTFT).
 */
final class Call {
    /** Past the limit the body is still read (and dropped) up to this much, so the client reads the 413 instead of a reset connection. */
    private static final long DRAIN_BEYOND_LIMIT = 16L << 20;

    final HttpExchange exchange;
    final long id;
    final long startNanos = System.nanoTime();
    final String method, path;
    private final long maxBodyBytes;
    int status;
    /** Filled in by the endpoints for the access line; -1: not applicable. */
    long promptTokens = -1, completionTokens = -1, firstTokenNanos = -1;
    String promptText;
    /** A generation request: the server's drain waits for it. */
    boolean generation;
    private boolean committed;

    Call(HttpExchange exchange, long id, long maxBodyBytes) {
        this.exchange = exchange;
        this.id = id;
        this.method = exchange.getRequestMethod();
        this.path = exchange.getRequestURI().getPath();
        this.maxBodyBytes = maxBodyBytes;
    }

    String header(String name) { return exchange.getRequestHeaders().getFirst(name); }

    /** Whether a response has started (headers sent): after that only the stream itself can say more. */
    boolean committed() { return committed; }

    /**
     * The body as a JSON object.
     *
     * @throws ApiException 413 past the size limit, 400 for malformed JSON or a document that is not an object
     */
    Fields jsonBody() {
        String text = new String(body(), StandardCharsets.UTF_8);
        Object doc;
        try {
            doc = Json.parse(text);
        } catch (JsonException e) {
            throw ApiException.badRequest(null, "the request body is not valid JSON: " + e.getMessage());
        }
        if (!(doc instanceof Map<?, ?> m)) throw ApiException.badRequest(null, "the request body must be a JSON object, got " + Fields.describe(doc));
        @SuppressWarnings("unchecked") Map<String, Object> map = (Map<String, Object>) m;
        return new Fields(map);
    }

    private byte[] body() {
        String cl = header("Content-Length");
        long declared = -1;
        if (cl != null) {
            try {
                declared = Long.parseLong(cl.trim());
            } catch (NumberFormatException e) {
                throw ApiException.badRequest(null, "bad Content-Length header: " + cl);
            }
        }
        try (InputStream in = exchange.getRequestBody()) {
            if (declared > maxBodyBytes) {
                if (declared <= maxBodyBytes + DRAIN_BEYOND_LIMIT) in.skipNBytes(declared);
                throw ApiException.tooLarge(maxBodyBytes);
            }
            ByteArrayOutputStream buf = new ByteArrayOutputStream((int) Math.max(0, Math.min(declared, maxBodyBytes)));
            byte[] chunk = new byte[16384];
            long total = 0;
            for (int n; (n = in.read(chunk)) > 0; ) {
                total += n;
                if (total > maxBodyBytes) {
                    // chunked upload past the limit: drop the rest (within reason) before answering
                    long dropped = 0;
                    while (dropped < DRAIN_BEYOND_LIMIT && (n = in.read(chunk)) > 0) dropped += n;
                    throw ApiException.tooLarge(maxBodyBytes);
                }
                buf.write(chunk, 0, n);
            }
            return buf.toByteArray();
        } catch (IOException e) {
            throw new ClientGone(e);
        }
    }

    void sendJson(int status, Object body) { send(status, "application/json", Json.write(body), Map.of()); }

    void sendError(ApiException e) { send(e.status, "application/json", Json.write(e.body()), e.headers); }

    void sendText(int status, String contentType, String text) { send(status, contentType, text, Map.of()); }

    private void send(int status, String contentType, String text, Map<String, String> headers) {
        if (committed) throw new IllegalStateException("response already started");
        committed = true;
        this.status = status;
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        var h = exchange.getResponseHeaders();
        h.set("Content-Type", contentType);
        headers.forEach(h::set);
        try {
            exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        } catch (IOException e) {
            throw new ClientGone(e);
        }
    }

    /** Starts a {@code text/event-stream} response (status 200, chunked). */
    SseStream startStream() {
        if (committed) throw new IllegalStateException("response already started");
        committed = true;
        status = 200;
        var h = exchange.getResponseHeaders();
        h.set("Content-Type", "text/event-stream; charset=utf-8");
        h.set("Cache-Control", "no-cache");
        try {
            exchange.sendResponseHeaders(200, 0);
            return new SseStream(exchange.getResponseBody(), this);
        } catch (IOException e) {
            throw new ClientGone(e);
        }
    }

    void close() { exchange.close(); }

    /** The client closed its connection (a read or write failed). */
    static final class ClientGone extends RuntimeException {
        ClientGone(IOException cause) { super("the client closed the connection: " + cause.getMessage(), cause); }
    }
}
