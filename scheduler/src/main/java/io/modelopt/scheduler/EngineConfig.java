package io.modelopt.scheduler;

import java.time.Duration;
import java.util.Objects;

/**
 * How an {@link Engine} schedules. Immutable; build with {@link #builder()}.
 *
 * @param maxNumSeqs          most sequences in one step (running samples; a request of {@code n} takes {@code n})
 * @param maxBatchedTokens    most tokens in one step, prefill chunks and decodes together
 * @param maxWaiting          requests the waiting queue holds; one more is rejected at once ({@link EngineRejectedException})
 * @param chunkedPrefill      split a prompt over steps to stay within {@code maxBatchedTokens}; off: a
 *                            prompt is scheduled whole, alone in its step when it exceeds the budget
 * @param kvBlocks            KV blocks of the pool; 0: the model's KV budget plan if it has one, else
 *                            enough for {@code maxNumSeqs} sequences of the full context
 * @param kvBlockSize         token slots per block (a power of two, 8..256)
 * @param prefixCaching       reuse the KV blocks of a prompt prefix computed before
 * @param closeGrace          how long {@link Engine#close()} lets running requests finish before cancelling them
 * @param metricsLogInterval  period of the SLF4J metrics line; zero turns it off
 */
public record EngineConfig(int maxNumSeqs, int maxBatchedTokens, int maxWaiting, boolean chunkedPrefill, int kvBlocks,
                           int kvBlockSize, boolean prefixCaching, Duration closeGrace, Duration metricsLogInterval) {

    public EngineConfig {
        positive("maxNumSeqs", maxNumSeqs);
        positive("maxBatchedTokens", maxBatchedTokens);
        positive("maxWaiting", maxWaiting);
        if (kvBlocks < 0) throw new IllegalArgumentException("kvBlocks (" + kvBlocks + ") must be >= 0 (0 = from the model)");
        Objects.requireNonNull(closeGrace, "closeGrace");
        Objects.requireNonNull(metricsLogInterval, "metricsLogInterval");
        if (closeGrace.isNegative()) throw new IllegalArgumentException("closeGrace must not be negative, got " + closeGrace);
        if (metricsLogInterval.isNegative()) throw new IllegalArgumentException("metricsLogInterval must not be negative, got " + metricsLogInterval);
        if (maxNumSeqs > maxBatchedTokens) {
            throw new IllegalArgumentException("maxNumSeqs (" + maxNumSeqs + ") must not exceed maxBatchedTokens (" + maxBatchedTokens + "): each sequence needs a token of the step");
        }
    }

    private static void positive(String what, int v) {
        if (v < 1) throw new IllegalArgumentException(what + " (" + v + ") must be >= 1");
    }

    public static EngineConfig defaults() { return builder().build(); }

    public static Builder builder() { return new Builder(); }

    public Builder toBuilder() {
        return builder().maxNumSeqs(maxNumSeqs).maxBatchedTokens(maxBatchedTokens).maxWaiting(maxWaiting).chunkedPrefill(chunkedPrefill)
                .kvBlocks(kvBlocks).kvBlockSize(kvBlockSize).prefixCaching(prefixCaching).closeGrace(closeGrace).metricsLogInterval(metricsLogInterval);
    }

    public static final class Builder {
        private int maxNumSeqs = 8, maxBatchedTokens = 256, maxWaiting = 256, kvBlocks, kvBlockSize = 16;
        private boolean chunkedPrefill = true, prefixCaching = true;
        private Duration closeGrace = Duration.ofSeconds(5), metricsLogInterval = Duration.ofSeconds(10);

        private Builder() {}

        public Builder maxNumSeqs(int v) { maxNumSeqs = v; return this; }
        public Builder maxBatchedTokens(int v) { maxBatchedTokens = v; return this; }
        public Builder maxWaiting(int v) { maxWaiting = v; return this; }
        public Builder chunkedPrefill(boolean v) { chunkedPrefill = v; return this; }
        public Builder kvBlocks(int v) { kvBlocks = v; return this; }
        public Builder kvBlockSize(int v) { kvBlockSize = v; return this; }
        public Builder prefixCaching(boolean v) { prefixCaching = v; return this; }
        public Builder closeGrace(Duration v) { closeGrace = v; return this; }
        public Builder metricsLogInterval(Duration v) { metricsLogInterval = v; return this; }

        public EngineConfig build() {
            return new EngineConfig(maxNumSeqs, maxBatchedTokens, maxWaiting, chunkedPrefill, kvBlocks, kvBlockSize, prefixCaching, closeGrace, metricsLogInterval);
        }
    }
}
