package io.modelopt.quantization.hf;

import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormatProvider;
import java.util.List;

/** Registers the weight formats of published AWQ, GPTQ and compressed-tensors checkpoints ({@link HfFormats#published()}). */
public final class HfFormatProvider implements WeightFormatProvider {
    @Override public List<WeightFormat> formats() { return HfFormats.published(); }
}
