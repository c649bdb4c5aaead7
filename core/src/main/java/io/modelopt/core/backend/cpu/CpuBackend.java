package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.model.ModelSource;

/** Runs Llama-family models on the CPU with the Vector API (or scalar) kernels; always available. */
public final class CpuBackend implements Backend {
    @Override public String name() { return "cpu"; }

    @Override public boolean isAvailable() { return true; }

    @Override public ModelRunner load(ModelSource source, RunnerOptions options) {
        return CpuLlamaRunner.load(source, options);
    }

    @Override public String toString() { return "CpuBackend"; }
}
