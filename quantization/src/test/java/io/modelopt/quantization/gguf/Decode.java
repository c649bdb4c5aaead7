package io.modelopt.quantization.gguf;

import io.modelopt.core.quant.IQ4_NL;
import io.modelopt.core.quant.Q2_K;
import io.modelopt.core.quant.Q3_K;
import io.modelopt.core.quant.Q4_0;
import io.modelopt.core.quant.Q4_1;
import io.modelopt.core.quant.Q4_K;
import io.modelopt.core.quant.Q5_0;
import io.modelopt.core.quant.Q5_1;
import io.modelopt.core.quant.Q5_K;
import io.modelopt.core.quant.Q6_K;
import io.modelopt.core.quant.Q8_0;
import io.modelopt.core.tensor.GgmlType;
import java.lang.foreign.MemorySegment;

/** The core reference decoders, by type, for the tests. */
final class Decode {
    private Decode() {}

    static float[] decode(GgmlType t, MemorySegment m, int n) {
        float[] y = new float[n];
        switch (t) {
            case Q4_0 -> Q4_0.dequantize(m, 0, y, 0, n);
            case Q4_1 -> Q4_1.dequantize(m, 0, y, 0, n);
            case Q5_0 -> Q5_0.dequantize(m, 0, y, 0, n);
            case Q5_1 -> Q5_1.dequantize(m, 0, y, 0, n);
            case Q8_0 -> Q8_0.dequantize(m, 0, y, 0, n);
            case Q2_K -> Q2_K.dequantize(m, 0, y, 0, n);
            case Q3_K -> Q3_K.dequantize(m, 0, y, 0, n);
            case Q4_K -> Q4_K.dequantize(m, 0, y, 0, n);
            case Q5_K -> Q5_K.dequantize(m, 0, y, 0, n);
            case Q6_K -> Q6_K.dequantize(m, 0, y, 0, n);
            case IQ4_NL -> IQ4_NL.dequantize(m, 0, y, 0, n);
            default -> throw new IllegalArgumentException(t.toString());
        }
        return y;
    }

    static float[] decode(GgmlType t, byte[] b, int n) {
        return decode(t, MemorySegment.ofArray(b), n);
    }

    /** rms(x - y) / rms(x). */
    static double relRms(float[] x, float[] y) {
        double e = 0, s = 0;
        for (int i = 0; i < x.length; i++) {
            e += (double) (x[i] - y[i]) * (x[i] - y[i]);
            s += (double) x[i] * x[i];
        }
        return Math.sqrt(e / s);
    }
}
