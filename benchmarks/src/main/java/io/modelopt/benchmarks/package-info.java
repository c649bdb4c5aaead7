/** JMH benchmarks: kernels, tokenizer, prefill/decode. Run via {@code java -jar benchmarks/target/benchmarks.jar}. */
package io.modelopt.benchmarks;
