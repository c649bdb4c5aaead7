package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;

/** Runs Llama-family models on the CPU with the Vector API (or scalar) kernels; always available. */
public final class CpuBackend implements Backend {
    @Override public String name() { return "cpu"; }

    @Override public boolean isAvailable() { return true; }

    /** Every {@link KvDtype}: F32, F16, BF16, INT8 and FP8 E4M3 (dequantized inside the attention kernel). */
    @Override public java.util.Set<KvDtype> kvDtypes() { return java.util.EnumSet.allOf(KvDtype.class); }

    @Override public ModelRunner load(ModelSource source, RunnerOptions options) {
        return CpuLlamaRunner.load(source, options);
    }

    @Override public String toString() { return "CpuBackend"; }
}
