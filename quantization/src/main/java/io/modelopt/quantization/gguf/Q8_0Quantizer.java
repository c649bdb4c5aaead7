package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/** Q8_0: {@code quantize_q8_0} always uses {@code quantize_row_q8_0_ref}; an importance matrix is ignored. */
public final class Q8_0Quantizer implements BlockQuantizer {
    static final Q8_0Quantizer INSTANCE = new Q8_0Quantizer();

    private Q8_0Quantizer() {}

    @Override public GgmlType type() { return GgmlType.Q8_0; }

    @Override public void quantizeRow(float[] x, int xOff, int n, float[] importance, byte[] dst, int dstOff) {
        BlockQuantizer.checkRow(type(), n, importance);
        Q8_0.quantizeReference(x, xOff, n, MemorySegment.ofArray(dst), dstOff);
    }
}
