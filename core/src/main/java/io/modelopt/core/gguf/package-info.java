/**
 * GGUF (llama.cpp's model format, versions 2 and 3, little-endian): {@link io.modelopt.core.gguf.GgufFile}
 * reads and validates a file and maps its tensors zero-copy, {@link io.modelopt.core.gguf.GgufWriter}
 * writes one (byte-identical to ggml/gguf-py for the same content), and
 * {@link io.modelopt.core.gguf.GgufModelSource} presents a GGUF model as a
 * {@link io.modelopt.core.model.ModelSource}. Every malformed input ends in a
 * {@link io.modelopt.core.ModelFormatException} naming the file, offset and problem.
 */
package io.modelopt.core.gguf;
