package io.modelopt.scheduler;

import io.modelopt.core.generate.FinishReason;
import java.util.ArrayList;
import java.util.List;

/** The engine's side of one request: its samples, times and handle. Touched by the step loop only (after submit). */
final class RequestState {
    final RequestHandle handle;
    final EngineRequest request;
    final int[] prompt;
    final long submitNanos;
    /** Long.MAX_VALUE without a deadline. */
    final long deadlineNanos;
    final Sample[] samples;
    long firstScheduledNanos = -1, firstTokenNanos = -1;
    int finishedSamples;
    boolean ended;
    /** Why the engine ended the request early (cancelled, expired, or cancelled by close), or null. */
    FinishReason endedBy;

    RequestState(RequestHandle handle, EngineRequest request, int[] prompt, long submitNanos) {
        this.handle = handle;
        this.request = request;
        this.prompt = prompt;
        this.submitNanos = submitNanos;
        this.deadlineNanos = request.timeout() == null ? Long.MAX_VALUE : submitNanos + request.timeout().toNanos();
        this.samples = new Sample[request.n()];
    }

    boolean expired(long now) { return now - deadlineNanos >= 0 && deadlineNanos != Long.MAX_VALUE; }

    EngineResult result(long now) {
        List<Completion> cs = new ArrayList<>();
        int generated = 0;
        for (int i = 0; i < samples.length; i++) {
            Sample s = samples[i];
            if (s == null) {
                // never started (ended before its prompt finished): an empty completion
                FinishReason why = endedBy != null ? endedBy : handle.cancelRequested() ? FinishReason.CANCELLED : FinishReason.EXPIRED;
                cs.add(new Completion(i, "", new int[0], why, new long[0]));
                continue;
            }
            generated += s.state.generatedCount();
            cs.add(new Completion(i, s.state.text(), s.state.generated(), s.state.finishReason(), s.tokenNanos()));
        }
        long queue = firstScheduledNanos < 0 ? now - submitNanos : firstScheduledNanos - submitNanos;
        long ttft = firstTokenNanos < 0 ? -1 : firstTokenNanos - submitNanos;
        return new EngineResult(cs, prompt.length, generated, queue, ttft, now - submitNanos);
    }
}
