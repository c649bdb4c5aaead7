package io.modelopt.quantization.awq;

import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import java.util.List;

/**
 * Linears reading one input whose channels AWQ scales together, and what produces that input
 * (AutoAWQ's {@code get_layers_for_scaling} for Llama): q/k/v after the attention norm, o after
 * v, gate/up after the FFN norm, down after up.
 *
 * @param input     the shared input
 * @param linears   the consumers (their columns are multiplied by the scales)
 * @param norm      the RMS norm producing the input ({@code attn_norm}, {@code ffn_norm}), or null
 * @param producer  the linear producing it (its rows are divided by the scales), or null
 */
public record ScalingGroup(LinearInput input, List<Linear> linears, String norm, Linear producer) {
    public ScalingGroup {
        linears = List.copyOf(linears);
        if ((norm == null) == (producer == null)) throw new IllegalArgumentException("a scaling group has a norm or a producer, not both or neither");
    }

    /** Llama's groups for {@code block}, all four (the caller drops those the model's shapes or the plan do not allow). */
    public static List<ScalingGroup> llama(int block) {
        String p = "blk." + block + ".";
        return List.of(
                new ScalingGroup(LinearInput.QKV, List.of(Linear.Q, Linear.K, Linear.V), p + "attn_norm.weight", null),
                new ScalingGroup(LinearInput.ATTN_OUTPUT, List.of(Linear.ATTN_OUTPUT), null, Linear.V),
                new ScalingGroup(LinearInput.GATE_UP, List.of(Linear.GATE, Linear.UP), p + "ffn_norm.weight", null),
                new ScalingGroup(LinearInput.DOWN, List.of(Linear.DOWN), null, Linear.UP));
    }

    @Override public String toString() {
        return (norm != null ? norm : producer.name()) + " -> " + linears;
    }
}
