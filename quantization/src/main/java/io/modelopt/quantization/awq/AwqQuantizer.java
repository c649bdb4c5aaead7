package io.modelopt.quantization.awq;

import io.modelopt.core.ProgressListener;
import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.tensor.TensorData;
import io.modelopt.quantization.calib.BlockMethod;
import io.modelopt.quantization.calib.CalibratedModelQuantizer;
import io.modelopt.quantization.gptq.GptqQuantizer;
import io.modelopt.quantization.model.FloatRows;
import io.modelopt.quantization.model.QuantizedModelSource;
import java.util.Set;

/**
 * Methods {@code awq} ({@link AwqBlockMethod} with AutoAWQ's defaults) and {@code awq+gptq}
 * (AWQ's scales, GPTQ's rounding with the spec's damp and act-order).
 */
public final class AwqQuantizer extends CalibratedModelQuantizer {
    /**
     * The source being quantized on this thread: AWQ folds its scales into the norms, which the
     * block context does not hand out, so the method reads them from the source.
     */
    private static final ThreadLocal<ModelSource> SOURCE = new ThreadLocal<>();
    private static final ThreadLocal<AwqBlockMethod> METHOD = new ThreadLocal<>();

    @Override protected Set<String> methods() { return Set.of("awq", "awq+gptq"); }

    @Override public QuantizedModelSource quantize(ModelSource source, QuantizationSpec spec, ProgressListener progress) {
        SOURCE.set(source);
        try {
            return super.quantize(source, spec, progress);
        } finally {
            AwqBlockMethod m = METHOD.get();
            if (m != null) m.close();
            METHOD.remove();
            SOURCE.remove();
        }
    }

    @Override protected BlockMethod blockMethod(QuantizationSpec spec, ComputePool pool) {
        ModelSource source = SOURCE.get();
        if (source == null) throw new IllegalStateException("AwqQuantizer.blockMethod outside quantize");
        AwqConfig config = AwqConfig.builder().duoScaling(spec.duoScaling()).build();
        AwqBlockMethod m = spec.method().equals("awq+gptq")
                ? new AwqBlockMethod(config, GptqQuantizer.config(spec), pool, name -> read(source, name))
                : new AwqBlockMethod(config, null, pool, name -> read(source, name));
        METHOD.set(m);
        return m;
    }

    /** A float tensor of the source as row-major floats. */
    static float[] read(ModelSource source, String name) {
        TensorData t = source.tensors().get(name);
        if (t == null) throw new IllegalArgumentException("the model has no tensor " + name + " (AWQ folds its scales into it)");
        int cols = Math.toIntExact(t.rowLength()), rows = Math.toIntExact(t.rows());
        float[] out = new float[rows * cols], row = new float[cols];
        for (int r = 0; r < rows; r++) {
            FloatRows.read(t, r, row);
            System.arraycopy(row, 0, out, r * cols, cols);
        }
        return out;
    }
}
