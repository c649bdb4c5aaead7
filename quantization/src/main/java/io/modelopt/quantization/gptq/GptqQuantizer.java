package io.modelopt.quantization.gptq;

import io.modelopt.core.QuantizationSpec;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.quantization.calib.BlockMethod;
import io.modelopt.quantization.calib.CalibratedModelQuantizer;
import java.util.Set;

/** Method {@code gptq}: {@link GptqBlockMethod} with the spec's damp, act-order and clip search, GPTQModel's other defaults. */
public final class GptqQuantizer extends CalibratedModelQuantizer {
    @Override protected Set<String> methods() { return Set.of("gptq"); }

    @Override protected BlockMethod blockMethod(QuantizationSpec spec, ComputePool pool) {
        return new GptqBlockMethod(config(spec), pool);
    }

    /** The GPTQ config a spec asks for. */
    public static GptqConfig config(QuantizationSpec spec) {
        return GptqConfig.builder().damp(spec.damp()).actOrder(spec.actOrder()).clipSearch(spec.clipSearch()).build();
    }
}
