package io.modelopt.quantization.calib;

import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.quantization.format.PackedIntTensors;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a {@link BlockMethod} made of one block.
 *
 * @param quantized     the block's quantized linears (every one the plan quantizes)
 * @param floatTensors  float tensors of the block replaced by the method (AWQ's norms with folded
 *                      scales), by canonical name, row-major F32 of the original shape; written to the
 *                      output model in the original's type
 * @param outputWeights the weights the block's output is computed with for the next block; null =
 *                      the quantized matrices in place of the float ones (a method that rescales a
 *                      tensor the block runner cannot substitute, such as a norm, gives the
 *                      equivalent fake-quantized linears here)
 */
public record BlockResult(Map<Linear, PackedIntTensors> quantized, Map<String, float[]> floatTensors, WeightSubstitution outputWeights) {
    public BlockResult {
        quantized = new EnumMap<>(quantized.isEmpty() ? new EnumMap<>(Linear.class) : quantized);
        floatTensors = new LinkedHashMap<>(floatTensors);
    }

    /** Quantized linears only; the next block sees them. */
    public static BlockResult of(Map<Linear, PackedIntTensors> quantized) {
        return new BlockResult(quantized, Map.of(), null);
    }
}
