package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;

/**
 * compressed-tensors' {@code pack-quantized} layout ({@code compressors/quantized_compressors/pack_quantized.py}
 * {@code pack_to_int32} / {@code unpack_from_int32}), read in place; bits 2, 4, 8 (whose codes fill
 * a word exactly, so a row of whole groups needs no padding):
 * <ul>
 *   <li>{@code weight_packed} int32 {@code [out, in·bits/32]} (main): input {@code k} of row
 *       {@code o} at word {@code k / pf}, bits {@code bits·(k % pf)}, stored as the signed
 *       quantized value plus {@code 2^(bits−1)}, which is our unsigned code.</li>
 *   <li>{@code weight_scale} {@code [out, in/g]} (part 0; F16, BF16 or F32, the model's dtype).</li>
 *   <li>{@code weight_zero_point} int32 {@code [ceil(out/pf), in/g]} (part 1, asymmetric only),
 *       packed along the output dimension ({@code packed_dim=0}): the zero of row {@code o}, group
 *       {@code g} at word {@code [o / pf][g]}, bits {@code bits·(o % pf)}, also offset by
 *       {@code 2^(bits−1)}, i.e. our unsigned zero. Symmetric: zero 0 signed, ours {@code 2^(bits−1)}.</li>
 * </ul>
 * {@code w = (x_q − zp) · scale} ({@code lifecycle/forward.py _dequantize}), the same value.
 */
final class CtPackedLayout implements IntLayout {
    private final IntScheme scheme;
    private final int bits, perWord, mask;

    CtPackedLayout(IntScheme scheme) {
        this.scheme = scheme;
        this.bits = scheme.bits();
        if (32 % bits != 0) throw new IllegalArgumentException("pack-quantized " + bits + "-bit rows need padding; only 2, 4 and 8 bits are read");
        this.perWord = 32 / bits;
        this.mask = (1 << bits) - 1;
    }

    @Override public IntScheme scheme() { return scheme; }

    @Override public void readRow(WeightMatrix w, int row, IntRow dst) {
        TensorData q = w.tensor(), s = w.part(0);
        int in = w.cols(), words = in / perWord, groups = dst.scales.length;
        long base = (long) row * words;
        for (int k = 0; k < in; k++) dst.codes[k] = (Words.i32(q, base + k / perWord) >>> (bits * (k % perWord))) & mask;
        int shift = bits * (row % perWord);
        for (int g = 0; g < groups; g++) {
            dst.scales[g] = Words.scale(s, (long) row * groups + g);
            dst.zeros[g] = scheme.symmetric() ? scheme.symmetricZero()
                    : (Words.i32(w.part(1), (long) (row / perWord) * groups + g) >>> shift) & mask;
        }
    }
}
