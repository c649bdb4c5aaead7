/** Quantizers (RTN, GPTQ, AWQ, AWQ then GPTQ), layer policy, our INT formats, GGUF quantization, HF export and import. */
module io.modelopt.quantization {
    requires transitive io.modelopt.core;
    requires jdk.incubator.vector; // the AWQ clip search's double kernel (CandidateErrors)
    exports io.modelopt.quantization;
    exports io.modelopt.quantization.gguf;
    exports io.modelopt.quantization.format;
    exports io.modelopt.quantization.rtn;
    exports io.modelopt.quantization.hf;
    exports io.modelopt.quantization.policy;
    exports io.modelopt.quantization.model;
    exports io.modelopt.quantization.calib;
    exports io.modelopt.quantization.gptq;
    exports io.modelopt.quantization.awq;

    provides io.modelopt.core.kernel.WeightFormatProvider with io.modelopt.quantization.format.PackedIntFormatProvider,
            io.modelopt.quantization.hf.HfFormatProvider;
    provides io.modelopt.core.model.WeightBinder with io.modelopt.quantization.format.PackedIntBinder,
            io.modelopt.quantization.hf.HfQuantizedBinder;
    provides io.modelopt.core.spi.Quantizer with io.modelopt.quantization.model.RtnModelQuantizer,
            io.modelopt.quantization.gptq.GptqQuantizer,
            io.modelopt.quantization.awq.AwqQuantizer;
    provides io.modelopt.core.spi.ModelExporter with io.modelopt.quantization.model.GgufModelExporter,
            io.modelopt.quantization.hf.AwqExporter, io.modelopt.quantization.hf.GptqExporter,
            io.modelopt.quantization.hf.CompressedTensorsExporter;
}
