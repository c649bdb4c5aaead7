package io.modelopt.scheduler;

/**
 * The listener form of a request's stream ({@link Engine#submit(EngineRequest, EngineListener)}).
 * Called on a delivery thread of the engine, never on the step loop, in order, one call at a time
 * per request. A listener that throws is detached (logged); its request and every other request
 * go on.
 */
public interface EngineListener {
    /** A token (or the finish event) of one sample. */
    void onToken(TokenEvent event);

    /** The request ended: every sample finished, was cancelled or expired. */
    default void onComplete(EngineResult result) {}

    /** The request failed (an error inside a step, or the engine shut down). */
    default void onError(Throwable error) {}
}
