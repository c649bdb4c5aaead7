package io.modelopt.scheduler;

/**
 * {@link Engine#submit} refused a request because the waiting queue is full: this library's HTTP
 * 429. Nothing was queued; retry later.
 */
public final class EngineRejectedException extends RuntimeException {
    private final int queueCapacity;

    EngineRejectedException(int queueCapacity) {
        super("the engine's waiting queue is full (" + queueCapacity + " requests waiting, EngineConfig.maxWaiting); retry later");
        this.queueCapacity = queueCapacity;
    }

    public int queueCapacity() { return queueCapacity; }
}
