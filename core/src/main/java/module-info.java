/**
 * Model-Optimizer core: model formats, tokenizers, the Llama-family engine on the CPU, kernels,
 * sampling, evaluation and the {@code ModelOptimizer} facade with its service interfaces.
 */
module io.modelopt.core {
    requires transitive org.slf4j;
    requires jdk.incubator.vector;

    exports io.modelopt.core;
    exports io.modelopt.core.json;
    exports io.modelopt.core.chat;
    exports io.modelopt.core.tensor;
    exports io.modelopt.core.gguf;
    exports io.modelopt.core.safetensors;
    exports io.modelopt.core.hf;
    exports io.modelopt.core.model;
    exports io.modelopt.core.loader;
    exports io.modelopt.core.tokenizer;
    exports io.modelopt.core.kernel;
    exports io.modelopt.core.quant;
    exports io.modelopt.core.kv;
    exports io.modelopt.core.engine;
    exports io.modelopt.core.eval;
    exports io.modelopt.core.model.llama;
    exports io.modelopt.core.backend.cpu;

    exports io.modelopt.core.spi;
    exports io.modelopt.core.sampling;
    exports io.modelopt.core.generate;
    exports io.modelopt.core.synthetic;

    uses io.modelopt.core.engine.Backend;
    uses io.modelopt.core.spi.Quantizer;
    uses io.modelopt.core.spi.ModelExporter;
    uses io.modelopt.core.spi.EngineProvider;
    uses io.modelopt.core.kernel.WeightFormatProvider;
    uses io.modelopt.core.model.WeightBinder;
    provides io.modelopt.core.engine.Backend with io.modelopt.core.backend.cpu.CpuBackend;
}
