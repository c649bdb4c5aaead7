package io.modelopt.scheduler;

import io.modelopt.core.OptimizedModel;
import io.modelopt.core.spi.EngineProvider;
import io.modelopt.core.spi.ServingEngine;

/** Registers the {@link Engine} with core ({@link OptimizedModel#engine()}), with {@link EngineConfig#defaults()} fitted to the model's runner. */
public final class EngineService implements EngineProvider {
    @Override public ServingEngine start(OptimizedModel model) {
        var o = model.runner().options();
        EngineConfig d = EngineConfig.defaults();
        int seqs = Math.min(d.maxNumSeqs(), o.maxLogitsRows());
        EngineConfig c = d.toBuilder().maxNumSeqs(seqs).maxBatchedTokens(Math.max(seqs, Math.min(d.maxBatchedTokens(), o.maxBatchTokens()))).build();
        return Engine.start(model, c);
    }
}
