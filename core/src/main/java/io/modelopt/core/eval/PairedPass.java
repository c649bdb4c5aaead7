package io.modelopt.core.eval;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;

/**
 * Runs two models over the same windows of a {@link WindowProtocol}, batch for batch, and scores
 * both at once: each model's perplexity and, optionally, the KL divergence between them. One pass
 * instead of three (two perplexities and a KL comparison), which is most of the cost of an
 * evaluation.
 *
 * <p>When both runners have the same limits the batches are those {@link Perplexity#evaluate}
 * builds for either alone and the NLLs are added in the same order, so each perplexity is
 * bit-for-bit the one that model gives alone.
 */
final class PairedPass {
    private PairedPass() {}

    /** @param kl null when the pass did not compare distributions */
    record Result(Perplexity.Result base, Perplexity.Result test, KlDivergence.Result kl) {}

    static Result run(ModelRunner base, ModelRunner test, int[] tokens, WindowProtocol protocol, boolean compareDistributions,
                      String stage, ProgressListener listener) {
        int vocab = base.config().vocabSize();
        if (test.config().vocabSize() != vocab) {
            throw new IllegalArgumentException("models have different vocabularies: " + vocab + " vs " + test.config().vocabSize());
        }
        EvaluationWindows wb = new EvaluationWindows(tokens, protocol, base);
        EvaluationWindows wt = new EvaluationWindows(tokens, protocol, test);
        // both runners see the same batches: the layout of the runner with the tighter limits fits both
        EvaluationWindows w = wb.sequences() != wt.sequences() ? (wb.sequences() < wt.sequences() ? wb : wt)
                : (wb.pieceLength() <= wt.pieceLength() ? wb : wt);
        ProgressListener progress = listener == null ? ProgressListener.NONE : listener;
        Perplexity.Accumulator nllBase = new Perplexity.Accumulator(), nllTest = new Perplexity.Accumulator();
        KlDivergence.Accumulator kl = new KlDivergence.Accumulator();
        float[] saved = null;
        progress.onProgress(stage, 0, w.windows());
        try (KvCache cb = base.newKvCache(w.sequences(), protocol.contextLength());
             KvCache ct = test.newKvCache(w.sequences(), protocol.contextLength())) {
            int reported = 0;
            while (w.next(cb, ct)) {
                Batch b = w.batch();
                Logits lb = base.forward(b, cb);
                int rows = lb.rows();
                // the base's logits view is only valid until its next forward; keep a copy beside the test's
                if (saved == null || saved.length < rows * vocab) saved = new float[Math.max(rows, 1) * vocab];
                if (rows > 0) System.arraycopy(lb.buffer(), lb.offset(0), saved, 0, rows * vocab);
                Logits lt = test.forward(b, ct);
                float[] tb = lt.buffer();
                for (int r = 0; r < rows; r++) {
                    int target = w.target(r);
                    nllBase.add(Perplexity.negativeLogLikelihood(saved, r * vocab, vocab, target));
                    nllTest.add(Perplexity.negativeLogLikelihood(tb, lt.offset(r), vocab, target));
                    if (compareDistributions) kl.add(saved, r * vocab, tb, lt.offset(r), vocab);
                }
                if (w.windowsDone() != reported) {
                    reported = w.windowsDone();
                    progress.onProgress(stage, reported, w.windows());
                }
            }
        }
        return new Result(nllBase.result(protocol, w.windows()), nllTest.result(protocol, w.windows()),
                compareDistributions ? kl.result() : null);
    }
}
