package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;

/**
 * AutoAWQ's GEMM layout ({@code awq/modules/linear/gemm.py} {@code WQLinear_GEMM.from_linear},
 * {@code awq/utils/packing_utils.py}), read in place:
 * <ul>
 *   <li>{@code qweight} int32 {@code [in, out/8]} (the main tensor): word {@code [k][c]} holds the
 *       codes of output channels {@code 8c .. 8c+7} of input {@code k}, nibble {@code i} (bits
 *       {@code 4i..4i+3}) holding channel {@code 8c + AWQ_ORDER[i]}, {@code AWQ_ORDER = [0,2,4,6,1,3,5,7]};
 *       so channel {@code o} sits at nibble {@code AWQ_REVERSE_ORDER[o % 8]}.</li>
 *   <li>{@code qzeros} int32 {@code [in/g, out/8]} (part 0), the zero points packed the same way.</li>
 *   <li>{@code scales} F16 {@code [in/g, out]} (part 1).</li>
 * </ul>
 * {@code w = (q − z) · s}. Row {@code r} of the weight is output channel {@code r}, i.e. a column
 * of the stored words: rows are read with a stride (the load-time rewrite into the kernels' blocks
 * reads them once).
 */
final class AwqGemmLayout implements IntLayout {
    static final int[] AWQ_ORDER = {0, 2, 4, 6, 1, 3, 5, 7};
    static final int[] AWQ_REVERSE_ORDER = {0, 4, 1, 5, 2, 6, 3, 7};

    private final IntScheme scheme;

    AwqGemmLayout(IntScheme scheme) {
        if (scheme.bits() != 4) throw new IllegalArgumentException("AutoAWQ GEMM packs 4-bit codes only, not " + scheme.bits());
        this.scheme = scheme;
    }

    @Override public IntScheme scheme() { return scheme; }

    @Override public void readRow(WeightMatrix w, int row, IntRow dst) {
        TensorData q = w.tensor(), z = w.part(0), s = w.part(1);
        int out = w.rows(), in = w.cols(), words = out / 8, col = row >>> 3;
        int shift = 4 * AWQ_REVERSE_ORDER[row & 7];
        for (int k = 0; k < in; k++) dst.codes[k] = (Words.i32(q, (long) k * words + col) >>> shift) & 0xF;
        int groups = dst.scales.length;
        for (int g = 0; g < groups; g++) {
            dst.zeros[g] = (Words.i32(z, (long) g * words + col) >>> shift) & 0xF;
            dst.scales[g] = Words.scale(s, (long) g * out + row);
        }
    }
}
