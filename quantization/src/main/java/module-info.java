/** Quantizers (RTN, AWQ, GPTQ), calibration, layer policy, exporters (the quantization issue fills it). */
module io.modelopt.quantization {
    requires transitive io.modelopt.core;
    exports io.modelopt.quantization;
    exports io.modelopt.quantization.gguf;
    exports io.modelopt.quantization.format;
    exports io.modelopt.quantization.rtn;

    provides io.modelopt.core.kernel.WeightFormatProvider with io.modelopt.quantization.format.PackedIntFormatProvider;
    provides io.modelopt.core.model.WeightBinder with io.modelopt.quantization.format.PackedIntBinder;

    // the spec-driven quantizer, its layer policy and the GGUF exporter (helper q-spec)
    exports io.modelopt.quantization.policy;
    exports io.modelopt.quantization.model;
    provides io.modelopt.core.spi.Quantizer with io.modelopt.quantization.model.RtnModelQuantizer;
    provides io.modelopt.core.spi.ModelExporter with io.modelopt.quantization.model.GgufModelExporter;
}
