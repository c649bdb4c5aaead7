package io.modelopt.server;

import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.OptimizedModel;
import io.modelopt.core.ProgressListener;
import io.modelopt.core.synthetic.SyntheticModel;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.chat.ChatTemplates;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.scheduler.Engine;
import io.modelopt.scheduler.EngineConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.UnaryOperator;

/** A model, its engine and a {@link Server} on an ephemeral loopback port, closed together. */
final class TestServer implements AutoCloseable {
    static final String MODEL = "stories260K";

    final OptimizedModel model;
    final Engine engine;
    final Server server;

    private TestServer(OptimizedModel model, Engine engine, Server server) {
        this.model = model;
        this.engine = engine;
        this.server = server;
    }

    /** The model at {@code path} (F32 KV cache: outputs as the single-sequence generator gives them) served as {@link #MODEL}. */
    static TestServer start(Path path, UnaryOperator<EngineConfig.Builder> engineConfig, UnaryOperator<ServerOptions.Builder> serverOptions) {
        return start(path, engineConfig, serverOptions, false);
    }

    /** With {@code chatMl}, chat requests are rendered by llama.cpp's ChatML fallback (the fixtures are base models without a template). */
    static TestServer start(Path path, UnaryOperator<EngineConfig.Builder> engineConfig, UnaryOperator<ServerOptions.Builder> serverOptions, boolean chatMl) {
        OptimizedModel model = ModelOptimizer.load(path).withKvCache(KvDtype.F32).withThreads(2).build();
        Engine engine = Engine.start(model, engineConfig.apply(EngineConfig.builder().maxNumSeqs(8).metricsLogInterval(Duration.ZERO)).build());
        ServerOptions.Builder o = ServerOptions.builder().port(0).servedModelName(MODEL);
        if (chatMl) o.chatTemplate(ChatTemplates.chatMl().withSpecialTokens(model.tokenizer()));
        Server server = Server.start(engine, serverOptions.apply(o).build());
        return new TestServer(model, engine, server);
    }

    static TestServer start(Path path) { return start(path, b -> b, b -> b); }

    URI uri(String path) { return server.baseUri().resolve(path); }

    private static Path longModel;

    /**
     * A tiny synthetic model with a 4096-token context (written once per test JVM): a request of
     * 2000 tokens runs for seconds on any machine, long enough to disconnect from, drain or queue
     * behind (stories260K's context of 128 tokens can finish in 150 ms on a fast one).
     */
    static synchronized Path longModel() throws java.io.IOException {
        if (longModel == null) {
            Path dir = java.nio.file.Files.createTempDirectory("modelopt-server-test");
            dir.toFile().deleteOnExit();
            Path file = dir.resolve("long4096-f32.gguf");
            SyntheticSpec spec = SyntheticSpec.builder("long4096").hiddenSize(64).numLayers(2).numHeads(4).numKvHeads(2).intermediateSize(128)
                    .vocabSize(512).contextLength(4096).build();
            SyntheticModel.of(spec, GgmlType.F32, SyntheticModel.DEFAULT_SEED).writeGguf(file, ProgressListener.NONE);
            file.toFile().deleteOnExit();
            longModel = file;
        }
        return longModel;
    }

    /** Waits until the engine reports no KV block in use (its gauges update every loop turn); returns the last count. */
    int awaitBlocksFree(Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        int used;
        while ((used = engine.metrics().kvBlocksUsed()) != 0 && System.nanoTime() < deadline) Thread.sleep(20);
        return used;
    }

    @Override public void close() {
        server.close();
        engine.close();
        model.close();
    }
}
