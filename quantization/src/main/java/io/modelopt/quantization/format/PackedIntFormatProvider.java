package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightFormat;
import io.modelopt.core.kernel.WeightFormatProvider;
import java.util.List;

/** Registers our packed integer formats ({@link PackedIntLayout#schemes()}) in core's format table. */
public final class PackedIntFormatProvider implements WeightFormatProvider {
    @Override public List<WeightFormat> formats() { return PackedIntLayout.formats(); }
}
