package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightMatrix;

/**
 * Where a group-wise integer weight's codes, scales and zero points lie in its tensors: our own
 * row-major packing, or an exporter's (AutoAWQ GEMM, GPTQ v1, compressed-tensors). A layout only
 * reads rows; the arithmetic (reference decode, kernels, the load-time rewrite into Q4_0/Q8_0
 * blocks) is shared by every layout ({@code IntFormats}).
 */
public interface IntLayout {
    /** The scheme every weight of this layout follows. */
    IntScheme scheme();

    /** Row {@code row} of {@code w} (a matrix bound to a format of this layout) in logical form. */
    void readRow(WeightMatrix w, int row, IntRow dst);
}
