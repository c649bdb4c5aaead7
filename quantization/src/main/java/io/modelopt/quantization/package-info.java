/** Quantizers (RTN, AWQ, GPTQ, k-quants), calibration data, layer policy and exporters. Arrives with the quantization issue. */
package io.modelopt.quantization;
