package io.modelopt.core.eval;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.kv.KvCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Perplexity of a model on a token stream, under a {@link WindowProtocol}:
 * {@link WindowProtocol#llamaCpp llama-perplexity's} (to compare with llama.cpp's numbers) or
 * {@link WindowProtocol#nonOverlapping the GPTQ/AWQ papers'} (to compare with published
 * quantization results). The KV cache is cleared between windows; several windows run per
 * forward as separate sequences when the runner's limits allow (that changes nothing: each
 * window only attends to itself).
 *
 * <p>Each scored position gives {@code NLL = logsumexp(logits) - logits[next]}, computed in double
 * from the float logits. PPL = exp(mean NLL); the ± is llama.cpp's
 * {@code PPL · sqrt((mean(NLL²) - mean(NLL)²) / (count - 1))}.
 */
public final class Perplexity {
    private static final Logger LOG = LoggerFactory.getLogger(Perplexity.class);

    private Perplexity() {}

    /**
     * @param windows       windows evaluated
     * @param tokensScored  predictions scored
     * @param meanNll       mean negative log-likelihood, nats
     * @param perplexity    exp(meanNll)
     * @param error         the ± llama-perplexity prints
     */
    public record Result(WindowProtocol protocol, int windows, long tokensScored, double meanNll, double perplexity, double error) {
        @Override public String toString() {
            return String.format("PPL = %.4f +/- %.5f (%d windows of %d, %d tokens scored, mean NLL %.6f)",
                    perplexity, error, windows, protocol.contextLength(), tokensScored, meanNll);
        }
    }

    /**
     * Evaluates {@code tokens} (the whole text tokenized as one string, with the BOS the
     * tokenizer adds). Progress is reported as windows done of windows total, stage "perplexity".
     * Uses a KV cache of the runner's KV dtype, created and freed here.
     */
    public static Result evaluate(ModelRunner runner, int[] tokens, WindowProtocol protocol, ProgressListener listener) {
        EvaluationWindows w = new EvaluationWindows(tokens, protocol, runner);
        ProgressListener progress = listener == null ? ProgressListener.NONE : listener;
        int vocab = runner.config().vocabSize();
        Accumulator acc = new Accumulator();
        LOG.debug("perplexity: {} windows of {}, {} per forward", w.windows(), protocol.contextLength(), w.sequences());
        progress.onProgress("perplexity", 0, w.windows());
        try (KvCache cache = runner.newKvCache(w.sequences(), protocol.contextLength())) {
            int reported = 0;
            while (w.next(cache)) {
                Batch b = w.batch();
                Logits l = runner.forward(b, cache);
                float[] buf = l.buffer();
                for (int r = 0; r < l.rows(); r++) acc.add(negativeLogLikelihood(buf, l.offset(r), vocab, w.target(r)));
                if (w.windowsDone() != reported) {
                    reported = w.windowsDone();
                    progress.onProgress("perplexity", reported, w.windows());
                    if (LOG.isDebugEnabled()) LOG.debug("perplexity: {}/{} windows, running PPL {}", reported, w.windows(), Math.exp(acc.sum / acc.count));
                }
            }
        }
        Result result = acc.result(protocol, w.windows());
        LOG.info("perplexity: {}", result);
        return result;
    }

    /**
     * Sums NLLs one scored position at a time, for callers that run the windows themselves (a
     * pass over two models at once); the result is the one {@link #evaluate} gives for the same
     * NLLs in the same order.
     */
    public static final class Accumulator {
        private double sum, sumSq;
        private long count;

        public void add(double nll) {
            sum += nll;
            sumSq += nll * nll;
            count++;
        }

        public long count() { return count; }

        public Result result(WindowProtocol protocol, int windows) {
            double mean = sum / count;
            double ppl = Math.exp(mean);
            double var = sumSq / count - mean * mean;
            double err = var > 0 && count > 1 ? ppl * Math.sqrt(var / (count - 1)) : 0;
            return new Result(protocol, windows, count, mean, ppl, err);
        }
    }

    /** {@code logsumexp(x) - x[target]} over {@code x[off .. off+n)}, in double. */
    public static double negativeLogLikelihood(float[] x, int off, int n, int target) {
        return logSumExp(x, off, n) - x[off + target];
    }

    /** {@code log Σ exp(x_i)}, shifted by the maximum so it never overflows; NaN if any x is NaN. */
    public static double logSumExp(float[] x, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) max = Math.max(max, x[off + i]);
        if (Float.isNaN(max) || Float.isInfinite(max)) return max;
        double s = 0;
        for (int i = 0; i < n; i++) s += Math.exp(x[off + i] - max);
        return Math.log(s) + max;
    }
}
