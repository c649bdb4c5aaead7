package io.modelopt.quantization.gptq;

import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.quantization.calib.BlockContext;
import io.modelopt.quantization.calib.BlockMethod;
import io.modelopt.quantization.calib.BlockResult;
import io.modelopt.quantization.calib.FloatWeight;
import io.modelopt.quantization.calib.InputStatistics;
import io.modelopt.quantization.format.IntScheme;
import io.modelopt.quantization.format.PackedIntTensors;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GPTQ over one decoder block. True-sequential (GPTQModel's default): the inputs are grouped as
 * the forward pass reads them, q/k/v, then o, then gate/up, then down; each group's Hessian is
 * collected with the groups before it already quantized (the block rerun with those weights
 * substituted), as AutoGPTQ's {@code true_sequential} does. Without it every Hessian comes from
 * the float block in one pass. The linears sharing an input share its Hessian.
 */
public final class GptqBlockMethod implements BlockMethod {
    private static final Logger LOG = LoggerFactory.getLogger(GptqBlockMethod.class);
    private static final List<LinearInput> ORDER = List.of(LinearInput.QKV, LinearInput.ATTN_OUTPUT, LinearInput.GATE_UP, LinearInput.DOWN);

    private final GptqConfig config;
    private final ComputePool pool;

    public GptqBlockMethod(GptqConfig config, ComputePool pool) {
        this.config = config;
        this.pool = pool;
    }

    @Override public String name() { return "gptq"; }

    @Override public InputStatistics statistics(int block, LinearInput input, int cols) {
        if (input == LinearInput.OUTPUT) return null;
        return config.trueSequential() && input != LinearInput.QKV ? null : new HessianAccumulator(pool, cols);
    }

    @Override public BlockResult quantizeBlock(BlockContext ctx) {
        Map<Linear, PackedIntTensors> done = new EnumMap<>(Linear.class);
        Map<Linear, WeightMatrix> subst = new EnumMap<>(Linear.class);
        int block = ctx.block();
        WeightSubstitution quantizedSoFar = (layer, linear, original) -> layer == block && subst.containsKey(linear) ? subst.get(linear) : original;
        for (LinearInput input : ORDER) {
            List<Linear> linears = input.linears().stream().filter(l -> ctx.scheme(l) != null).toList();
            if (linears.isEmpty()) continue;
            InputStatistics stats = ctx.statistics(input);
            boolean fresh = stats == null;
            if (fresh) {
                ctx.phase("collect " + input.name().toLowerCase(Locale.ROOT));
                stats = ctx.collect(quantizedSoFar, in -> in == input ? new HessianAccumulator(pool) : null).get(input);
            }
            if (!(stats instanceof HessianAccumulator acc) || acc.tokens() == 0) {
                throw new IllegalStateException("gptq: no calibration inputs reached " + input + " of block " + block);
            }
            // The accumulator is done with: its sum becomes H in place (no copy of a 5632² double matrix at
            // the 1B shape), and the solver, which overwrites its H, takes a copy only when another linear
            // of this input still needs it (gate and up).
            double[] h = acc.takeHessian();
            long hBytes = 8L * h.length;
            ctx.noteWorkingBytes((fresh ? hBytes : 0) + (linears.size() > 1 ? hBytes : 0));
            for (int li = 0; li < linears.size(); li++) {
                Linear l = linears.get(li);
                ctx.phase("quantize " + l.ggufName());
                FloatWeight w = ctx.weights(l);
                IntScheme s = ctx.scheme(l);
                PackedIntTensors out = ctx.allocate(l, s, w.rows(), w.cols());
                long t0 = System.nanoTime();
                GptqSolver.Stats st = GptqSolver.quantize(w.name(), w.data(), w.rows(), w.cols(), li + 1 < linears.size() ? h.clone() : h, s, config, pool, out::writeRow);
                LOG.debug("gptq {} {}: loss {} damp {} in {} ms", w.name(), s, st.loss(), st.damp(), (System.nanoTime() - t0) / 1_000_000);
                done.put(l, out);
                subst.put(l, out.matrix());
            }
        }
        return BlockResult.of(done);
    }
}
