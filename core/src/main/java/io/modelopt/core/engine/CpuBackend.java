package io.modelopt.core.engine;

import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.llama.LlamaRunner;

/** Runs Llama-family models on the CPU with the Vector API (or scalar) kernels; always available. */
public final class CpuBackend implements Backend {
    @Override public String name() { return "cpu"; }

    @Override public boolean isAvailable() { return true; }

    @Override public ModelRunner load(ModelSource source, RunnerOptions options) {
        return LlamaRunner.load(source, options);
    }

    @Override public String toString() { return "CpuBackend"; }
}
