package io.modelopt.core.spi;

import io.modelopt.core.OptimizedModel;

/**
 * Starts a {@link ServingEngine} on a model, found by {@link OptimizedModel#engine()} through
 * {@link java.util.ServiceLoader} (register it in {@code module-info} and
 * {@code META-INF/services/io.modelopt.core.spi.EngineProvider}). Core ships none; the scheduler
 * module brings the continuous-batching engine, so core does not depend on it.
 */
public interface EngineProvider {
    /** An engine on {@code model}'s runner; the model stays open and owned by its caller. */
    ServingEngine start(OptimizedModel model);
}
