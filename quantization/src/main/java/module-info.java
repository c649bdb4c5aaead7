/** Quantizers (RTN, AWQ, GPTQ), calibration, layer policy, exporters (the quantization issue fills it). */
module io.modelopt.quantization {
    requires transitive io.modelopt.core;
    exports io.modelopt.quantization;
    exports io.modelopt.quantization.gguf;
    exports io.modelopt.quantization.format;

    provides io.modelopt.core.kernel.WeightFormatProvider with io.modelopt.quantization.format.PackedIntFormatProvider;
    provides io.modelopt.core.model.WeightBinder with io.modelopt.quantization.format.PackedIntBinder;
}
