/** KV cache management: block pool, block tables, prefix cache (the paged-KV issue fills it). */
module io.modelopt.kvcache {
    requires transitive io.modelopt.core;
    exports io.modelopt.kvcache;
}
