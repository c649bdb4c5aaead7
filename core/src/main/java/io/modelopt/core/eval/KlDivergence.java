package io.modelopt.core.eval;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.engine.ModelRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How far one model's next-token distributions are from another's over the same tokens, the
 * usual measure of quantization quality (llama-perplexity's {@code --kl-divergence}): the mean of
 * {@code KL(P_base ‖ P_test) = Σ p·(log p − log q)} in nats, and the fraction of positions where
 * both models rank the same token first. Log-probabilities come from float logits in double.
 */
public final class KlDivergence {
    private static final Logger LOG = LoggerFactory.getLogger(KlDivergence.class);

    private KlDivergence() {}

    /**
     * @param meanKl         mean KL divergence, nats
     * @param maxKl          largest KL of one position
     * @param top1Agreement  fraction of positions with the same argmax, in [0, 1]
     */
    public record Result(long positions, double meanKl, double maxKl, double top1Agreement) {
        @Override public String toString() {
            return String.format("mean KL %.6f nats (max %.4f), top-1 agreement %.3f%% over %d positions",
                    meanKl, maxKl, 100 * top1Agreement, positions);
        }
    }

    /** Accumulates positions one at a time; for callers that produce both logit rows themselves. */
    public static final class Accumulator {
        private long count, agree;
        private double sum, max;

        /** Adds one position: base logits {@code base[bOff..bOff+n)}, test logits {@code test[tOff..tOff+n)}. */
        public void add(float[] base, int bOff, float[] test, int tOff, int n) {
            double lseP = Perplexity.logSumExp(base, bOff, n), lseQ = Perplexity.logSumExp(test, tOff, n);
            double kl = 0;
            int argP = 0, argQ = 0;
            for (int i = 0; i < n; i++) {
                double logP = base[bOff + i] - lseP;
                double logQ = test[tOff + i] - lseQ;
                double p = Math.exp(logP);
                if (p > 0) kl += p * (logP - logQ);
                if (base[bOff + i] > base[bOff + argP]) argP = i;
                if (test[tOff + i] > test[tOff + argQ]) argQ = i;
            }
            kl = Math.max(kl, 0);   // rounding can give -1e-17 for identical rows
            sum += kl;
            max = Math.max(max, kl);
            if (argP == argQ) agree++;
            count++;
        }

        public Result result() {
            return new Result(count, count == 0 ? 0 : sum / count, max, count == 0 ? 0 : (double) agree / count);
        }
    }

    /**
     * Runs {@code base} and {@code test} (same vocabulary) over the windows of {@code protocol}
     * and compares their distributions at every scored position. Stage "kl-divergence".
     */
    public static Result compare(ModelRunner base, ModelRunner test, int[] tokens, WindowProtocol protocol, ProgressListener listener) {
        Result r = PairedPass.run(base, test, tokens, protocol, true, "kl-divergence", listener).kl();
        LOG.info("kl-divergence: {}", r);
        return r;
    }
}
