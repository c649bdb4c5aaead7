/** Quantizers (RTN, AWQ, GPTQ), calibration, layer policy, exporters (the quantization issue fills it). */
module io.modelopt.quantization {
    requires transitive io.modelopt.core;
    exports io.modelopt.quantization;
    exports io.modelopt.quantization.gguf;
    exports io.modelopt.quantization.format;
    exports io.modelopt.quantization.rtn;
    exports io.modelopt.quantization.hf;

    provides io.modelopt.core.kernel.WeightFormatProvider with io.modelopt.quantization.format.PackedIntFormatProvider,
            io.modelopt.quantization.hf.HfFormatProvider;
    provides io.modelopt.core.model.WeightBinder with io.modelopt.quantization.format.PackedIntBinder,
            io.modelopt.quantization.hf.HfQuantizedBinder;
    provides io.modelopt.core.spi.ModelExporter with io.modelopt.quantization.hf.AwqExporter,
            io.modelopt.quantization.hf.GptqExporter, io.modelopt.quantization.hf.CompressedTensorsExporter;
}
