package io.modelopt.scheduler;

import io.modelopt.core.generate.SequenceState;
import java.util.Arrays;

/**
 * One sequence the scheduler runs: sample {@code index} of a request. Its known tokens are the
 * prompt and what it generated ({@link #ids}, {@link #length}); {@link #computed} of them have keys
 * and values in its KV blocks. It is scheduled for {@code ids[computed .. length)}: the rest of its
 * prompt (in chunks), one decode token, or all of it again after a preemption (recompute).
 */
final class Sample {
    final RequestState request;
    final int index;
    final SequenceState state;
    int[] ids;
    int length;
    int computed;
    /** The sequence id in the batch and the block manager while admitted; -1 while waiting. */
    int seqId = -1;
    /** Order of admission (larger = more recent), for choosing whom to preempt. */
    long admitOrder;
    /** True for sample 0 of an n > 1 request until its prompt is computed, when it forks the others. */
    boolean forksPending;
    boolean preempted;
    private long[] tokenNanos = new long[16];
    private int tokens;
    long lastTokenNanos = -1;

    Sample(RequestState request, int index, SequenceState state, int[] ids, int length) {
        this.request = request;
        this.index = index;
        this.state = state;
        this.ids = ids;
        this.length = length;
    }

    int[] knownTokens() { return Arrays.copyOf(ids, length); }

    /** Tokens it is owed in the next step: what is known but not computed. */
    int pending() { return length - computed; }

    void append(int token) {
        if (length == ids.length) ids = Arrays.copyOf(ids, Math.max(16, 2 * length));
        ids[length++] = token;
    }

    void recordToken(long sinceSubmit) {
        if (tokens == tokenNanos.length) tokenNanos = Arrays.copyOf(tokenNanos, 2 * tokens);
        tokenNanos[tokens++] = sinceSubmit;
    }

    long[] tokenNanos() { return Arrays.copyOf(tokenNanos, tokens); }
}
