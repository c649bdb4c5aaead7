package io.modelopt.core.eval;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kv.KvCache;

/**
 * Cuts a token stream into the evaluation windows of a {@link WindowProtocol} and feeds them to a
 * runner as batches: several windows per forward, each its own sequence, when they fit the
 * runner's batch and logits limits; else one window in pieces. Only the scored positions ask for
 * logits. For each logits row {@link #target(int)} is the token it must predict.
 */
final class EvaluationWindows {
    private final int[] tokens;
    private final WindowProtocol protocol;
    private final int nCtx, windows, sequences, pieceLength;
    private final Batch.Builder builder;
    private final int[] targets;
    private int group, offset, windowsDone;
    private Batch batch;

    EvaluationWindows(int[] tokens, WindowProtocol protocol, ModelRunner runner) {
        this.tokens = tokens;
        this.protocol = protocol;
        this.nCtx = protocol.contextLength();
        if (nCtx > runner.contextLength()) {
            throw new IllegalArgumentException("evaluation context " + nCtx + " exceeds the runner's context length " + runner.contextLength());
        }
        int available = tokens.length / nCtx;
        if (available == 0) {
            throw new IllegalArgumentException("need at least one window of " + nCtx + " tokens, got " + tokens.length + " tokens");
        }
        this.windows = protocol.maxWindows() > 0 ? Math.min(available, protocol.maxWindows()) : available;
        RunnerOptions o = runner.options();
        int scored = protocol.scoredPerWindow();
        int fit = Math.min(o.maxBatchTokens() / nCtx, o.maxLogitsRows() / scored);
        this.sequences = Math.max(1, Math.min(fit, windows));
        this.pieceLength = sequences > 1 ? nCtx : Math.min(nCtx, Math.min(o.maxBatchTokens(), o.maxLogitsRows()));
        this.builder = Batch.builder(sequences * pieceLength);
        this.targets = new int[sequences * pieceLength];
    }

    /** Sequences the KV cache must hold. */
    int sequences() { return sequences; }

    int windows() { return windows; }

    /** Positions of one window fed per batch (the whole window when several windows share a batch). */
    int pieceLength() { return pieceLength; }

    /** Tokens scored over all windows. */
    long tokensToScore() { return (long) windows * protocol.scoredPerWindow(); }

    /**
     * Builds the next batch (clearing the caches' sequences where a window starts); false when
     * every window has been fed. Call {@link #batch()} for it.
     */
    boolean next(KvCache... caches) {
        int firstWindow = group * sequences;
        if (firstWindow >= windows) return false;
        int inGroup = Math.min(sequences, windows - firstWindow);
        int end = Math.min(nCtx, offset + pieceLength);
        int firstScored = protocol.firstScoredPosition();
        builder.clear();
        int rows = 0;
        for (int s = 0; s < inGroup; s++) {
            if (offset == 0) for (KvCache c : caches) c.clear(s);
            int base = (firstWindow + s) * nCtx;
            for (int j = offset; j < end; j++) {
                int token = j == 0 && protocol.bosToken() >= 0 ? protocol.bosToken() : tokens[base + j];
                boolean scored = j >= firstScored && j <= nCtx - 2;
                builder.add(token, j, s, scored);
                if (scored) targets[rows++] = tokens[base + j + 1];
            }
        }
        batch = builder.build();
        offset = end;
        if (offset >= nCtx) {
            group++;
            offset = 0;
            windowsDone = firstWindow + inGroup;
        }
        return true;
    }

    Batch batch() { return batch; }

    /** The token logits row {@code row} of the current batch must predict. */
    int target(int row) { return targets[row]; }

    /** Windows complete once the current batch has been run. */
    int windowsDone() { return windowsDone; }
}
