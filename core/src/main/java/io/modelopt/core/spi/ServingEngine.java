package io.modelopt.core.spi;

import io.modelopt.core.generate.GenerationOptions;
import io.modelopt.core.generate.GenerationResult;
import io.modelopt.core.generate.TokenListener;

/**
 * What core sees of a serving engine (the scheduler module's continuous-batching {@code Engine}):
 * thread-safe generation shared by many callers. The scheduler's type has the full API
 * (handles, streaming publishers, n samples, metrics); cast {@link io.modelopt.core.OptimizedModel#engine()} to it.
 */
public interface ServingEngine extends AutoCloseable {
    /** Generates a continuation of {@code prompt} among whatever else the engine runs; blocks until it ends. Thread-safe. */
    GenerationResult generate(String prompt, GenerationOptions options, TokenListener listener);

    /** Stops admitting, finishes or cancels what runs, releases the engine's KV pool and threads. */
    @Override void close();
}
