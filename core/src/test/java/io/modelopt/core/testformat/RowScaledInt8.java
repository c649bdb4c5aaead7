package io.modelopt.core.testformat;

import io.modelopt.core.kernel.Activations;
import io.modelopt.core.kernel.FormatKernel;
import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormatProvider;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.TensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * A weight format that exists only in the tests, registered from outside core's kernel package
 * without editing any core switch: per-row symmetric INT8, an I8 {@code weight} tensor plus an
 * F32 {@code weight_scale} with one scale per output row ({@code w[r][k] = q[r][k] · scale[r]}),
 * as compressed-tensors' channel-wise INT8 checkpoints store it. Its kernel multiplies the F32
 * activations by the integer weights and scales each row's sum once.
 */
public final class RowScaledInt8 implements WeightFormatProvider {
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public static final WeightFormat FORMAT = WeightFormat.builder("TEST_INT8_ROW_SCALED")
            .geometry(1, 1)
            .decoder((w, row, dst, off) -> {
                MemorySegment q = w.tensor().data();
                float scale = scale(w, row);
                long base = (long) row * w.cols();
                for (int k = 0; k < w.cols(); k++) dst[off + k] = q.get(ValueLayout.JAVA_BYTE, base + k) * scale;
            })
            .scalar(new Kernel())
            .build();

    @Override public List<WeightFormat> formats() { return List.of(FORMAT); }

    static float scale(WeightMatrix w, int row) {
        TensorData scales = w.part(0);
        return scales.data().get(F32, 4L * row);
    }

    /** Σ_k q[r][k]·x[k] in float, times the row's scale. */
    static final class Kernel implements FormatKernel {
        @Override public Activations.Kind activations() { return Activations.Kind.F32; }

        @Override public void compute(WeightMatrix w, Activations a, int rowStart, int rowEnd, float[] out, int outOff, int outStride) {
            MemorySegment q = w.tensor().data();
            float[] x = a.input();
            int cols = w.cols();
            for (int t = 0; t < a.tokens(); t++) {
                int xo = a.inputOffset(t);
                for (int r = rowStart; r < rowEnd; r++) {
                    long base = (long) r * cols;
                    float sum = 0;
                    for (int k = 0; k < cols; k++) sum += q.get(ValueLayout.JAVA_BYTE, base + k) * x[xo + k];
                    out[outOff + t * outStride + r] = sum * scale(w, r);
                }
            }
        }
    }
}
