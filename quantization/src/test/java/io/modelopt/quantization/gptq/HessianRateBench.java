package io.modelopt.quantization.gptq;

import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Not a test: the Hessian accumulation's FLOP rate against the prefill GEMM's (an F32 2048 × 2048
 * weight times 2048 tokens), the 1.1B shape's q/k/v input. Run alone:
 * {@code flock /tmp/bench.lock ./mvnw -o -q -pl quantization -am test -Dtest=HessianRateBench -Dmodelopt.bench=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@EnabledIfSystemProperty(named = "modelopt.bench", matches = "true")
class HessianRateBench {
    @Test
    void hessianVersusPrefillGemm() {
        int cols = 2048, tokens = 2048, threads = 2;
        Random r = new Random(1);
        float[] x = new float[tokens * cols], w = new float[cols * cols], out = new float[tokens * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        for (int i = 0; i < w.length; i++) w[i] = (float) r.nextGaussian();
        WeightMatrix wm = WeightMatrix.of(new TensorData("w", GgmlType.F32, new long[] {cols, cols}, MemorySegment.ofArray(w)));
        double flops = 2.0 * cols * cols * tokens;
        try (ComputePool pool = new ComputePool(threads)) {
            HessianAccumulator h = new HessianAccumulator(pool, cols);
            double bestH = Double.MAX_VALUE, bestG = Double.MAX_VALUE;
            for (int rep = 0; rep < 4; rep++) {
                long t0 = System.nanoTime();
                h.accept(x, tokens, cols);
                long t1 = System.nanoTime();
                MatMul.matmul(pool, wm, x, tokens, out);
                long t2 = System.nanoTime();
                bestH = Math.min(bestH, (t1 - t0) / 1e9);
                bestG = Math.min(bestG, (t2 - t1) / 1e9);
            }
            System.out.printf(Locale.ROOT, "hessian %d cols x %d tokens: %.3f s, %.1f GFLOP/s; prefill GEMM F32 %dx%d x %d tokens: %.3f s, %.1f GFLOP/s (%d threads)%n",
                    cols, tokens, bestH, flops / bestH / 1e9, cols, cols, tokens, bestG, flops / bestG / 1e9, threads);
        }
    }
}
