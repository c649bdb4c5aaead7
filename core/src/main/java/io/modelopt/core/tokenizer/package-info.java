/**
 * Tokenizers that reproduce the reference implementations' ids exactly.
 *
 * <ul>
 *   <li>{@link io.modelopt.core.tokenizer.Tokenizers#fromGguf} — llama.cpp's tokenizers over a GGUF's
 *       {@code tokenizer.ggml.*} vocabulary: SentencePiece BPE ({@code model = "llama"}, merged by token
 *       score, byte fallback) and byte-level BPE ({@code model = "gpt2"}, merged by rank, with the
 *       pre-tokenizer regexes {@code tokenizer.ggml.pre} names), special tokens cut out as
 *       llama.cpp's {@code tokenizer_st_partition} does.</li>
 *   <li>{@link io.modelopt.core.tokenizer.Tokenizers#fromHuggingFace} — a {@code tokenizer.json} BPE
 *       model with HF tokenizers' normalizers, pre-tokenizers (Split, ByteLevel, Metaspace, ...),
 *       added tokens, post-processor and decoders, plus tokenizer_config.json's BOS/EOS settings.</li>
 * </ul>
 *
 * <p>Both share one merge loop ({@code PairMerger}): a heap keyed by (rank, position) over a linked
 * list of symbols, O(n log n), cut beforehand where no merge result can span a boundary. All
 * tokenizers are immutable and thread-safe.
 */
package io.modelopt.core.tokenizer;
