package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;

/**
 * compressed-tensors' {@code int-quantized} layout for 8-bit weights
 * ({@code naive_quantized.py IntQuantizationCompressor}): {@code weight} int8 {@code [out, in]}
 * (main), the signed quantized values; {@code weight_scale} {@code [out, in/g]} (part 0; one column
 * for the {@code channel} strategy); asymmetric: {@code weight_zero_point} int8 {@code [out, in/g]}
 * (part 1; symmetric schemes do not save it). Our unsigned code is the signed value plus 128, our
 * zero the signed zero plus 128.
 */
final class CtIntLayout implements IntLayout {
    private final IntScheme scheme;

    CtIntLayout(IntScheme scheme) {
        if (scheme.bits() != 8) throw new IllegalArgumentException("int-quantized holds 8-bit weights here, not " + scheme.bits());
        this.scheme = scheme;
    }

    @Override public IntScheme scheme() { return scheme; }

    @Override public void readRow(WeightMatrix w, int row, IntRow dst) {
        TensorData q = w.tensor(), s = w.part(0);
        int in = w.cols(), groups = dst.scales.length;
        long base = (long) row * in;
        for (int k = 0; k < in; k++) dst.codes[k] = Words.i8(q, base + k) + 128;
        for (int g = 0; g < groups; g++) {
            dst.scales[g] = Words.scale(s, (long) row * groups + g);
            dst.zeros[g] = scheme.symmetric() ? 128 : Words.i8(w.part(1), (long) row * groups + g) + 128;
        }
    }
}
