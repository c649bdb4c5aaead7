/** FFM bindings to libcuda (generated code in {@code io.modelopt.cuda.ffi}) and their owners. Arrives with the CUDA issue. */
package io.modelopt.cuda;
