package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntLayout;
import io.modelopt.quantization.format.IntRow;
import io.modelopt.quantization.format.IntScheme;

/**
 * GPTQ's layout as AutoGPTQ and GPTQModel write it ({@code QuantLinear.pack} /
 * {@code pack_block}), read in place; bits 2, 4 and 8 (whose codes fill 32-bit words exactly; 3-bit
 * codes straddle words and are not read here):
 * <ul>
 *   <li>{@code qweight} int32 {@code [in·bits/32, out]} (main): word {@code [j][o]} holds inputs
 *       {@code j·pf .. j·pf+pf−1} of output {@code o}, input {@code k} at bits
 *       {@code bits·(k % pf)}, {@code pf = 32/bits}.</li>
 *   <li>{@code qzeros} int32 {@code [in/g, out·bits/32]} (part 0): zero of output {@code o} at
 *       word {@code o / pf}, bits {@code bits·(o % pf)}. Checkpoint format {@code gptq} (v1) stores
 *       {@code zero − 1}: GPTQModel subtracts {@code 0x11111111} (4-bit; {@code 0x01010101} 8-bit,
 *       {@code 0x55555555} 2-bit) from each packed word when it saves v1 and adds it back when it
 *       loads, which is what this layout does; a zero point 0 then borrows from the next field in
 *       the file but comes back exactly (readers that add 1 per field, as AutoGPTQ's kernels, read
 *       such a group's neighbours wrong; see {@code GptqExporter}). {@code gptq_v2} stores zeros as they are.</li>
 *   <li>{@code scales} F16 {@code [in/g, out]} (part 1).</li>
 * </ul>
 * Groups are contiguous here ({@code g_idx[k] = k / g}); a checkpoint with an activation-order
 * {@code g_idx} binds to {@link GptqActOrder} instead.
 */
final class GptqLayout implements IntLayout {
    private final IntScheme scheme;
    private final boolean v2;
    private final int bits, perWord, mask, v1Offset;

    GptqLayout(IntScheme scheme, boolean v2) {
        this.scheme = scheme;
        this.v2 = v2;
        this.bits = scheme.bits();
        if (32 % bits != 0) throw new IllegalArgumentException("GPTQ " + bits + "-bit codes straddle 32-bit words; only 2, 4 and 8 bits are read");
        this.perWord = 32 / bits;
        this.mask = (1 << bits) - 1;
        this.v1Offset = v1Offset(bits);
    }

    /** The constant GPTQModel adds to each packed v1 zero-point word ({@code convert_gptq_v1_to_v2_format_module}): a 1 in every field. */
    static int v1Offset(int bits) {
        return switch (bits) {
            case 2 -> 0x55555555;
            case 4 -> 0x11111111;
            case 8 -> 0x01010101;
            default -> throw new IllegalArgumentException("no v1 zero-point offset for " + bits + " bits");
        };
    }

    @Override public IntScheme scheme() { return scheme; }

    boolean v2() { return v2; }

    @Override public void readRow(WeightMatrix w, int row, IntRow dst) {
        readCodes(w, row, dst.codes);
        readGroups(w, row, dst.scales, dst.zeros);
    }

    void readCodes(WeightMatrix w, int row, int[] codes) {
        TensorData q = w.tensor();
        int out = w.rows(), in = w.cols();
        for (int k = 0; k < in; k++) codes[k] = (Words.i32(q, (long) (k / perWord) * out + row) >>> (bits * (k % perWord))) & mask;
    }

    /** Scales and zero points of every group of output {@code row} (as many as {@code scales} holds). */
    void readGroups(WeightMatrix w, int row, float[] scales, int[] zeros) {
        TensorData z = w.part(0), s = w.part(1);
        int out = w.rows(), words = out / perWord, shift = bits * (row % perWord), col = row / perWord;
        for (int g = 0; g < scales.length; g++) {
            int word = Words.i32(z, (long) g * words + col);
            if (!v2) word += v1Offset;
            zeros[g] = (word >>> shift) & mask;
            scales[g] = Words.scale(s, (long) g * out + row);
        }
    }
}
