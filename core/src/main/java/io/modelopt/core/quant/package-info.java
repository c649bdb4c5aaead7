/**
 * The ggml block formats, one final class per format, exactly as ggml's {@code ggml-common.h}
 * lays them out: block geometry ({@code BLOCK_ELEMENTS}, {@code BLOCK_BYTES}), a
 * {@link java.lang.foreign.StructLayout} of one block, a plain scalar {@code dequantize} written
 * after ggml's {@code dequantize_row_*} (the reference every fast kernel is tested against) and,
 * where needed, {@code quantizeReference} written after ggml's {@code quantize_row_*_ref}.
 *
 * <p>All multi-byte fields are little endian. Half floats are converted with
 * {@link Float#float16ToFloat}/{@link Float#floatToFloat16} (IEEE round-to-nearest-even, as
 * ggml's F16C path does).
 */
package io.modelopt.core.quant;
