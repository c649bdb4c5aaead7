/**
 * GGUF quantization as llama.cpp's llama-quantize does it, byte for byte: the block quantizers of
 * ggml's legacy and k-quant formats ({@link io.modelopt.quantization.gguf.BlockQuantizer}, one
 * class per type, with and without an importance matrix), the per-tensor type choice of the
 * presets ({@link io.modelopt.quantization.gguf.TensorTypePolicy},
 * {@link io.modelopt.quantization.gguf.GgufPreset}), the legacy imatrix file
 * ({@link io.modelopt.quantization.gguf.ImatrixFile}) and the whole-file quantizer
 * ({@link io.modelopt.quantization.gguf.GgufQuantizer}).
 */
package io.modelopt.quantization.gguf;
