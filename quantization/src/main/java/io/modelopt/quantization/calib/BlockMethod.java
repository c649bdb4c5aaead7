package io.modelopt.quantization.calib;

import io.modelopt.core.engine.LinearInput;

/**
 * A calibrated quantization method seen one decoder block at a time (GPTQ, AWQ, AWQ then GPTQ):
 * the {@link BlockwiseCalibrator} runs the calibration set through block {@code i} with the
 * statistics this method asks for, hands it the block, and feeds the block's <i>quantized</i>
 * output to block {@code i + 1}.
 *
 * <p>Stable API (the methods are written against it): changes are announced as such.
 */
public interface BlockMethod {
    /** Name for logs and progress ({@code gptq}, {@code awq}). */
    String name();

    /**
     * A fresh accumulator for {@code input} of {@code block} ({@code cols} floats per row), filled
     * while the calibration set runs through the block with its float weights; null when this
     * method needs nothing of that input. Read back with {@link BlockContext#statistics(LinearInput)}.
     */
    InputStatistics statistics(int block, LinearInput input, int cols);

    /**
     * Quantizes block {@code context.block()}: every linear {@link BlockContext#scheme} assigns a
     * scheme to gets a result (allocated with {@link BlockContext#allocate}).
     *
     * @throws IllegalArgumentException naming the tensor when it cannot be quantized
     */
    BlockResult quantizeBlock(BlockContext context);
}
