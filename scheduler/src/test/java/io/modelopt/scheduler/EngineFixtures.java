package io.modelopt.scheduler;

import io.modelopt.core.backend.cpu.CpuLlamaRunner;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Path;

/** A fixture model opened with a runner sized for the engine. */
record EngineFixtures(ModelSource source, ModelRunner runner) implements AutoCloseable {
    static EngineFixtures open(String model, boolean batchInvariant) {
        Path p = model.equals("stories260K") ? Fixtures.storiesGguf("f32") : Fixtures.brownGguf("f32");
        ModelSource src = GgufModelSource.open(p);
        RunnerOptions o = RunnerOptions.builder().threads(2).kvDtype(KvDtype.F32).maxBatchTokens(128).maxLogitsRows(16).batchInvariant(batchInvariant).build();
        return new EngineFixtures(src, CpuLlamaRunner.load(src, o));
    }

    Engine engine(EngineConfig config) { return Engine.start(runner, source.tokenizer(), config); }

    @Override public void close() {
        runner.close();
        source.close();
    }
}
