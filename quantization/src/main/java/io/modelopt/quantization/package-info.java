/** Quantizers (RTN, AWQ, GPTQ, AWQ+GPTQ, GGUF k-quants with imatrix), calibration data, layer policy, HF and GGUF exporters; the subpackages hold each. */
package io.modelopt.quantization;
