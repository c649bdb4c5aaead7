package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;

/** The Vector API kernels by format; only referenced (so only loaded) in {@link KernelMode#VECTOR}. */
final class VectorKernels {
    private VectorKernels() {}

    static FormatKernel forType(GgmlType type) {
        return switch (type) {
            case F32 -> F32Kernel.Vectorized.INSTANCE;
            case F16 -> F16Kernel.Vectorized.INSTANCE;
            case BF16 -> BF16Kernel.Vectorized.INSTANCE;
            case Q8_0 -> Q8_0Kernel.Vectorized.INSTANCE;
            case Q4_0 -> Q4_0Kernel.Vectorized.INSTANCE;
            case Q4_1 -> Q4_1Kernel.Vectorized.INSTANCE;
            case Q5_0 -> Q5_0Kernel.Vectorized.INSTANCE;
            case Q4_K -> Q4_KKernel.Vectorized.INSTANCE;
            case Q5_K -> Q5_KKernel.Vectorized.INSTANCE;
            case Q6_K -> Q6_KKernel.Vectorized.INSTANCE;
            default -> throw new IllegalStateException("unreachable: " + type);
        };
    }
}
