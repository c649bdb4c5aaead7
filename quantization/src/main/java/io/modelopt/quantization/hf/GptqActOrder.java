package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.DecodedRowKernel;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.format.IntScheme;

/**
 * A GPTQ weight quantized in activation order ({@code desc_act}): input {@code k} belongs to group
 * {@code g_idx[k]}, which is not {@code k / g}, so the groups are not runs of consecutive columns
 * and no {@link io.modelopt.quantization.format.IntRow} (nor a Q4_0 block with one offset per 32
 * columns) describes a row. Such a weight gets a format of its own: the stored tensors as GPTQ
 * lays them out ({@link GptqLayout}) plus {@code g_idx} (part 2), a reference decoder that applies
 * {@code w[k] = s[g_idx[k]] · (q[k] − z[g_idx[k]])} as GPTQModel's {@code dequantize_weight} does,
 * and the decoded-row kernel; it has no transcoding onto the fast kernels. (Permuting the columns
 * into group order would need the activations permuted the same way at every matmul, which the
 * engine does not do.)
 */
final class GptqActOrder {
    private GptqActOrder() {}

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static final class Scratch {
        int[] codes = new int[0], zeros = new int[0];
        float[] scales = new float[0];

        void size(int cols, int groups) {
            if (codes.length < cols) codes = new int[cols];
            if (scales.length != groups) {
                scales = new float[groups];
                zeros = new int[groups];
            }
        }
    }

    /** The act-order format of {@code bits}-bit GPTQ, v1 or v2 zero points. */
    static WeightFormat create(String name, int bits, boolean v2) {
        GptqLayout reader = new GptqLayout(IntScheme.of(bits, IntScheme.PER_CHANNEL, false), v2);
        return WeightFormat.builder(name).geometry(32 / bits, 4)
                .decoder((w, row, dst, off) -> decode(reader, w, row, dst, off))
                .scalar(DecodedRowKernel.scalar()).vector(DecodedRowKernel::vector)
                .build();
    }

    private static void decode(GptqLayout reader, WeightMatrix w, int row, float[] dst, int off) {
        TensorData gIdx = w.part(2);
        int cols = w.cols(), groups = (int) w.part(1).dim(1);
        Scratch s = SCRATCH.get();
        s.size(cols, groups);
        reader.readCodes(w, row, s.codes);
        reader.readGroups(w, row, s.scales, s.zeros);
        for (int k = 0; k < cols; k++) {
            int g = Words.i32(gIdx, k);
            dst[off + k] = s.scales[g] * (s.codes[k] - s.zeros[g]);
        }
    }
}
