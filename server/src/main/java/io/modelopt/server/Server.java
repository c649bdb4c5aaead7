package io.modelopt.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.modelopt.core.chat.ChatTemplate;
import io.modelopt.scheduler.Engine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An OpenAI-compatible HTTP server on one {@link Engine}: {@code POST /v1/completions},
 * {@code POST /v1/chat/completions}, {@code GET /v1/models}, {@code GET /health} and
 * {@code GET /metrics}. The JDK's {@code com.sun.net.httpserver} with one virtual thread per
 * exchange; a streaming request holds its thread while the engine's step loop runs its tokens.
 *
 * <p>Lifecycle: {@link #starting} binds at once and answers 503 until {@link #ready} hands it
 * the engine (the model loads meanwhile; {@link #start} does both). {@link #close()} drains:
 * new generation requests and {@code /health} get 503 while the running ones finish within
 * {@link ServerOptions#shutdownGrace()}; what still runs then is cancelled, and the listener
 * closes. The engine stays the caller's to close.
 */
public final class Server implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Server.class);
    private static final Logger access = LoggerFactory.getLogger("io.modelopt.server.access");

    private enum State { LOADING, SERVING, DRAINING, STOPPED }

    private final ServerOptions options;
    private final HttpServer http;
    private final ExecutorService executor;
    private final ApiKey apiKey;
    private final PrometheusMetrics metrics = new PrometheusMetrics();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicInteger generating = new AtomicInteger();
    private final Set<Generation> active = ConcurrentHashMap.newKeySet();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final long createdEpochSeconds = System.currentTimeMillis() / 1000;
    private final Object lifecycle = new Object();
    private volatile State state = State.LOADING;
    private volatile Engine engine;
    private volatile CompletionsEndpoint completions;
    private volatile ChatCompletionsEndpoint chat;

    private Server(ServerOptions options) throws IOException {
        this.options = options;
        this.apiKey = options.apiKey() == null ? null : new ApiKey(options.apiKey());
        this.http = HttpServer.create(new InetSocketAddress(options.host(), options.port()), 256);
        this.executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("modelopt-http-", 0).factory());
        http.setExecutor(executor);
        http.createContext("/", this::dispatch);
        http.start();
        InetSocketAddress a = address();
        log.info("server: listening on http://{}:{} (model '{}'{}{})", a.getHostString(), a.getPort(), options.servedModelName(),
                apiKey == null ? ", no API key" : ", API key required",
                a.getAddress().isLoopbackAddress() ? "" : "; NOT loopback: reachable from the network");
    }

    /** Binds and serves {@code engine} at once. */
    public static Server start(Engine engine, ServerOptions options) {
        Server s = starting(options);
        s.ready(engine);
        return s;
    }

    /**
     * Binds now and answers 503 (health included) until {@link #ready}: a supervisor sees the
     * process up and loading, as vLLM's health check reports it.
     *
     * @throws UncheckedIOException the address cannot be bound (in use, not local)
     */
    public static Server starting(ServerOptions options) {
        Objects.requireNonNull(options, "options");
        try {
            return new Server(options);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + options.host() + ":" + options.port() + ": " + e.getMessage(), e);
        }
    }

    /** Starts serving {@code engine} (once), with the options' chat template. */
    public void ready(Engine engine) { ready(engine, options.chatTemplate()); }

    /**
     * Starts serving {@code engine} (once) with {@code chatTemplate} (null: none) in place of the
     * options': the model's own template is known only once the model has loaded.
     */
    public void ready(Engine engine, ChatTemplate chatTemplate) {
        Objects.requireNonNull(engine, "engine");
        synchronized (lifecycle) {
            if (state != State.LOADING) throw new IllegalStateException("the server is " + state.name().toLowerCase(Locale.ROOT) + "; ready() works once, while loading");
            this.completions = new CompletionsEndpoint(engine, options, this);
            this.chat = new ChatCompletionsEndpoint(engine, options, this, new ChatPrompts(chatTemplate, engine.tokenizer()));
            this.engine = engine;
            state = State.SERVING;
        }
        log.info("server: serving '{}' (context {} tokens, {} sequences at once, queue {}, {})", options.servedModelName(), engine.contextLength(),
                engine.config().maxNumSeqs(), engine.config().maxWaiting(), chatTemplate == null ? "no chat template: chat requests get 400" : "chat template set");
    }

    public ServerOptions options() { return options; }

    public InetSocketAddress address() { return http.getAddress(); }

    public int port() { return address().getPort(); }

    /** {@code http://host:port} (the API is under {@code /v1}). */
    public URI baseUri() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort());
    }

    /** Whether it serves (ready, not draining or closed). */
    public boolean isServing() { return state == State.SERVING; }

    /** Blocks until {@link #close()} has finished. */
    public void awaitClosed() throws InterruptedException { stopped.await(); }

    /**
     * On SIGTERM (a JVM shutdown): {@link #close()} this server, then each of {@code after} in
     * order (the engine, the model). Returns the hook thread (already registered).
     */
    public Thread closeOnShutdown(AutoCloseable... after) {
        Thread hook = Thread.ofPlatform().name("modelopt-server-shutdown").unstarted(() -> {
            log.info("server: shutting down (signal)");
            close();
            for (AutoCloseable c : after) {
                try {
                    c.close();
                } catch (Exception e) {
                    log.warn("server: closing {} failed", c, e);
                }
            }
        });
        Runtime.getRuntime().addShutdownHook(hook);
        return hook;
    }

    /**
     * Drains and stops: new generation requests get 503 at once, running ones may finish within
     * the shutdown grace, then they are cancelled (their clients get an error) and the listener
     * closes. Idempotent; a second caller waits for the first.
     */
    @Override public void close() {
        synchronized (lifecycle) {
            if (state == State.DRAINING || state == State.STOPPED) {
                // another thread drains: wait for it
            } else {
                state = State.DRAINING;
                Thread.ofPlatform().name("modelopt-server-drain").start(this::drain);
            }
        }
        boolean interrupted = false;
        while (true) {
            try {
                stopped.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    private void drain() {
        try {
            long deadline = System.nanoTime() + options.shutdownGrace().toNanos();
            log.info("server: draining: {} generation requests running, grace {} s", generating.get(), options.shutdownGrace().toSeconds());
            while (generating.get() > 0 && System.nanoTime() - deadline < 0) sleep(20);
            if (generating.get() > 0) {
                log.info("server: grace over; cancelling {} requests", generating.get());
                for (Generation g : active) g.cancel();
                long cancelDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (generating.get() > 0 && System.nanoTime() - cancelDeadline < 0) sleep(20);
            }
            http.stop(0);
            executor.shutdown();
            if (!executor.awaitTermination(2, TimeUnit.SECONDS)) executor.shutdownNow();
        } catch (InterruptedException e) {
            executor.shutdownNow();
        } finally {
            state = State.STOPPED;
            stopped.countDown();
            log.info("server: stopped");
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void track(Generation g) { active.add(g); }

    void untrack(Generation g) { active.remove(g); }

    // ---- routing ----

    private void dispatch(HttpExchange exchange) {
        Call call = new Call(exchange, ids.incrementAndGet(), options.maxBodyBytes());
        String note = "";
        try {
            route(call);
        } catch (ApiException e) {
            if (!call.committed()) sendQuietly(call, e);
            note = " (" + e.getMessage() + ")"; // messages quote at most 40 characters of a wrong value, never a prompt
        } catch (Call.ClientGone e) {
            if (call.status == 0) call.status = 499; // nginx's "client closed request", for the log only
            note = " (client disconnected)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (!call.committed()) sendQuietly(call, ApiException.unavailable("the server is stopping"));
        } catch (RuntimeException | Error e) {
            log.warn("server: {} {} failed", call.method, call.path, e);
            if (!call.committed()) sendQuietly(call, ApiException.internal("internal error: " + e));
            note = " (" + e + ")";
        } finally {
            call.close();
            if (call.generation) generating.decrementAndGet();
            logAccess(call, note);
        }
    }

    private static void sendQuietly(Call call, ApiException e) {
        try {
            call.sendError(e);
        } catch (Call.ClientGone ignored) {
            call.status = e.status;
        }
    }

    private void route(Call call) throws InterruptedException {
        String path = call.path;
        switch (path) {
            case "/health" -> {
                allow(call, "GET");
                State s = state;
                Engine e = engine;
                if (s == State.SERVING && e != null && !e.isClosed()) call.sendJson(200, Map.of("status", "serving"));
                else call.sendJson(503, Map.of("status", s == State.LOADING ? "loading" : "shutting down"));
            }
            case "/metrics" -> {
                allow(call, "GET");
                Engine e = engine;
                call.sendText(200, PrometheusMetrics.CONTENT_TYPE, metrics.render(e == null ? null : e.metrics()));
            }
            case "/v1/models" -> {
                allow(call, "GET");
                authorize(call);
                call.sendJson(200, Map.of("object", "list", "data", List.of(modelCard())));
            }
            case "/v1/completions", "/v1/chat/completions" -> {
                allow(call, "POST");
                authorize(call);
                // counted until the exchange is closed (dispatch), so that a drain never stops the listener under a stream's last chunk
                generating.incrementAndGet();
                call.generation = true;
                State s = state;
                if (s == State.LOADING) throw ApiException.unavailable("the model is still loading; retry shortly");
                if (s != State.SERVING) throw ApiException.unavailable("the server is shutting down");
                if (path.equals("/v1/completions")) completions.handle(call);
                else chat.handle(call);
            }
            default -> {
                if (path.startsWith("/v1/models/")) {
                    allow(call, "GET");
                    authorize(call);
                    String id = path.substring("/v1/models/".length());
                    if (!id.equals(options.servedModelName())) throw ApiException.modelNotFound(id, options.servedModelName());
                    call.sendJson(200, modelCard());
                } else {
                    throw ApiException.notFound("no such endpoint: " + call.method + " " + path
                            + " (this server has POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health, GET /metrics)");
                }
            }
        }
    }

    private Map<String, Object> modelCard() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", options.servedModelName());
        m.put("object", "model");
        m.put("created", createdEpochSeconds);
        m.put("owned_by", "modelopt");
        Engine e = engine;
        if (e != null) m.put("max_model_len", e.contextLength());
        return m;
    }

    private static void allow(Call call, String method) {
        if (!call.method.equals(method)) throw ApiException.methodNotAllowed(call.method, call.path, method);
    }

    private void authorize(Call call) {
        if (apiKey != null && !apiKey.accepts(call.header("Authorization"))) throw ApiException.unauthorized();
    }

    private void logAccess(Call call, String note) {
        metrics.countResponse(call.path.startsWith("/v1/models/") ? "/v1/models/{id}" : knownPath(call.path), call.status);
        if (!access.isInfoEnabled()) return;
        long now = System.nanoTime();
        String ttft = call.firstTokenNanos < 0 ? "-" : String.format(Locale.ROOT, "%.1fms", (call.firstTokenNanos - call.startNanos) / 1e6);
        access.info(String.format(Locale.ROOT, "#%d %s %s %d prompt_tokens=%s completion_tokens=%s ttft=%s duration=%.1fms%s", call.id, call.method, call.path,
                call.status, count(call.promptTokens), count(call.completionTokens), ttft, (now - call.startNanos) / 1e6, note));
        if (call.promptText != null) access.info("#{} prompt: {}", call.id, call.promptText);
    }

    private static String knownPath(String p) {
        return switch (p) {
            case "/health", "/metrics", "/v1/models", "/v1/completions", "/v1/chat/completions" -> p;
            default -> "other";
        };
    }

    private static String count(long v) { return v < 0 ? "-" : Long.toString(v); }
}
