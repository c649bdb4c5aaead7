package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.chat.ChatTemplate;
import io.modelopt.core.chat.ChatTemplateException;
import io.modelopt.core.chat.ChatTemplates;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.kv.KvBudget;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import io.modelopt.server.Server;
import io.modelopt.server.ServerOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/**
 * {@code modelopt serve --model MODEL}: the OpenAI-compatible HTTP server on the
 * continuous-batching engine. It listens at once (health 503 while the model loads), serves until
 * SIGTERM or Ctrl-C, then drains: running requests get the grace period to finish.
 */
public final class ServeCommand implements Command {
    static final int DEFAULT_MAX_NUM_SEQS = 8, DEFAULT_MAX_WAITING = 64;

    @Override public String name() { return "serve"; }

    @Override public String summary() { return "serve a model over an OpenAI-compatible HTTP API (completions, chat, streaming, metrics)"; }

    @Override public String usage() {
        return """
                usage: modelopt serve --model MODEL [--host 127.0.0.1] [--port 8000] [--served-model-name NAME]
                                      [--api-key KEY] [--max-num-seqs N] [--max-model-len N | --ctx N]
                                      [--kv-cache TYPE] [--kv-budget B] [--quantize METHOD ...] [--request-timeout 600s]
                                      [--chat-template FILE]
                  --model MODEL           a .gguf file or a Hugging Face model directory
                  --host H                address to bind (default 127.0.0.1, loopback only; 0.0.0.0 for every interface)
                  --port P                TCP port (default 8000; 0 picks a free one, printed at start)
                  --served-model-name N   the model id clients send and /v1/models lists (default: the file or folder name)
                  --api-key KEY           require 'Authorization: Bearer KEY' on /v1/* (401 otherwise); also $MODELOPT_API_KEY
                  --max-num-seqs N        sequences the engine runs at once (default %d)
                  --max-waiting N         requests that may wait for a seat; one more gets 429 (default %d)
                  --max-batched-tokens B  tokens per engine step, prefill chunks and decodes (default max(256, N))
                  --max-model-len N       context length, prompt + completion (vLLM's name; --ctx is the same; default: the model's)
                  --quantize METHOD       quantize in memory first, as `quantize --method` does (rtn, q4_0, q4_k_m, ...),
                                          with its --bits, --group-size, --symmetric, --clip-search, --keep, --override
                  --request-timeout T     longest a request may wait and run (default 600s; 500ms, 30s, 10m, 1h)
                  --shutdown-grace T      on SIGTERM: how long running requests may finish before being cancelled (default 30s)
                  --chat-template FILE    a Jinja chat template for /v1/chat/completions (or a tokenizer_config.json);
                                          default: the model's own (GGUF tokenizer.chat_template, tokenizer_config.json);
                                          without either, chat requests get 400
                  --max-body-bytes N      largest request body (default %d); larger gets 413
                  --log-prompts           also log each request's prompt text (off: the access log has counts and times only)
                  --threads T             compute threads (default: all processors)
                %s
                %s
                Endpoints: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health, GET /metrics
                (docs/SERVER.md).""".formatted(DEFAULT_MAX_NUM_SEQS, DEFAULT_MAX_WAITING, ServerOptions.DEFAULT_MAX_BODY_BYTES,
                CommandOptions.BACKEND_USAGE, CommandOptions.KV_USAGE);
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "host", "port", "served-model-name", "api-key", "max-num-seqs", "max-waiting", "max-batched-tokens",
                "max-model-len", "ctx", "kv", "kv-cache", "kv-budget", "quantize", "bits", "group-size", "keep", "override", "request-timeout",
                "shutdown-grace", "chat-template", "max-body-bytes", "threads", "backend"), Set.of("symmetric", "clip-search", "log-prompts"));
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        Path modelPath = Path.of(args.require("model"));
        if (args.has("max-model-len") && args.has("ctx")) throw new Args.UsageException("--max-model-len and --ctx are the same option; give one");
        int seqs = atLeast(args, "max-num-seqs", DEFAULT_MAX_NUM_SEQS, 1);
        int waiting = atLeast(args, "max-waiting", DEFAULT_MAX_WAITING, 1);
        int batched = atLeast(args, "max-batched-tokens", Math.max(256, seqs), seqs);
        KvDtype kv = CommandOptions.kvDtype(args);
        KvBudget budget = CommandOptions.kvBudget(args);
        int threads = CommandOptions.threads(args);
        String backend = CommandOptions.backend(args).name();
        String apiKey = args.get("api-key", System.getenv("MODELOPT_API_KEY"));
        // a template file is parsed now (a syntax error is a usage error before anything loads); its special tokens come with the model
        ChatTemplate fileTemplate = null;
        if (args.has("chat-template")) {
            Path t = Path.of(args.get("chat-template", null));
            try {
                fileTemplate = ChatTemplates.fromFile(t);
            } catch (java.io.UncheckedIOException | ChatTemplateException | io.modelopt.core.ModelFormatException e) {
                throw new Args.UsageException("--chat-template " + t + ": " + e.getMessage());
            }
        }
        ServerOptions options;
        try {
            options = ServerOptions.builder().host(args.get("host", "127.0.0.1")).port(args.getInt("port", 8000))
                    .servedModelName(args.get("served-model-name", defaultName(modelPath))).apiKey(apiKey == null || apiKey.isEmpty() ? null : apiKey)
                    .requestTimeout(duration(args, "request-timeout", "600s")).shutdownGrace(duration(args, "shutdown-grace", "30s"))
                    .maxBodyBytes(args.getLong("max-body-bytes", ServerOptions.DEFAULT_MAX_BODY_BYTES))
                    .logPrompts(args.has("log-prompts")).build();
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException(e.getMessage());
        }

        // listen first: a supervisor sees the port and health 503 while the model loads
        Server server = Server.starting(options);
        OptimizedModel model = null;
        Engine engine = null;
        try {
            err.println("modelopt serve: listening on " + server.baseUri() + " (health 503 until loaded); loading " + modelPath);
            ModelOptimizer m = ModelOptimizer.load(modelPath);
            int trained = m.config().contextLength();
            int ctx = args.has("max-model-len") ? args.getInt("max-model-len", trained) : args.getInt("ctx", trained);
            String ctxName = args.has("max-model-len") ? "--max-model-len" : "--ctx";
            if (ctx < 2 || ctx > trained) {
                m.close();
                throw new Args.UsageException(ctxName + " must be in [2, " + trained + "] (the model's trained context length), got " + ctx);
            }
            m.withKvCache(kv).withContextLength(ctx).withThreads(threads).withBackend(backend).withProgress(new ProgressBar(err));
            if (budget != null) m.withKvBudget(budget);
            if (args.has("quantize")) m.quantize(QuantizeCommand.spec(args, args.get("quantize", null).toLowerCase(Locale.ROOT)));
            try {
                model = m.build();
            } catch (RuntimeException e) {
                m.close();
                throw e;
            }
            model.kvPlan().ifPresent(p -> err.println(p));
            EngineConfig config = EngineConfig.builder().maxNumSeqs(seqs).maxBatchedTokens(batched).maxWaiting(waiting)
                    .closeGrace(options.shutdownGrace()).build();
            engine = Engine.start(model, config);
            ChatTemplate template = fileTemplate != null ? fileTemplate.withSpecialTokens(model.tokenizer()) : ChatTemplates.find(model.source()).orElse(null);
            err.println("modelopt serve: chat template: " + (fileTemplate != null ? "from " + args.get("chat-template", null)
                    : template != null ? "the model's own" : "none (chat requests get 400; --chat-template FILE gives one)"));
            server.ready(engine, template);
        } catch (Exception | Error e) {
            server.close();
            if (engine != null) engine.close();
            if (model != null) model.close();
            throw e;
        }
        server.closeOnShutdown(engine, model);
        err.println("modelopt serve: serving '" + options.servedModelName() + "' on " + server.baseUri() + "/v1 (Ctrl-C or SIGTERM stops, draining "
                + options.shutdownGrace().toSeconds() + " s)");
        server.awaitClosed();
        return 0;
    }

    /** The model id by default: the file name without .gguf, or the folder's name. */
    static String defaultName(Path model) {
        Path f = model.toAbsolutePath().normalize().getFileName();
        String name = f == null ? "model" : f.toString();
        return name.toLowerCase(Locale.ROOT).endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }

    /** {@code 600s}, {@code 500ms}, {@code 10m}, {@code 1h}, or plain seconds. */
    static Duration duration(Args args, String name, String def) {
        String v = args.get(name, def).trim().toLowerCase(Locale.ROOT);
        try {
            if (v.endsWith("ms")) return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            if (v.endsWith("s")) return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
            if (v.endsWith("m")) return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60_000));
            if (v.endsWith("h")) return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 3_600_000));
            return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
        } catch (NumberFormatException e) {
            throw new Args.UsageException("--" + name + " must be a duration such as 600s, 500ms, 10m or 1h, got '" + args.get(name, def) + "'");
        }
    }

    private static int atLeast(Args args, String name, int def, int min) {
        int v = args.getInt(name, def);
        if (v < min) throw new Args.UsageException("--" + name + " must be >= " + min + ", got " + v);
        return v;
    }
}
