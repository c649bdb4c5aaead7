/** CUDA driver bindings (jextract form) and the CUDA backend (the CUDA issue fills it). */
module io.modelopt.cuda {
    requires transitive io.modelopt.core;
    exports io.modelopt.cuda;
}
