/** Round-to-nearest quantization into the group-wise integer schemes of {@link io.modelopt.quantization.format.IntScheme}. */
package io.modelopt.quantization.rtn;
