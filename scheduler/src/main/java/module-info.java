/** Continuous-batching engine and scheduling policy (the batching issue fills it). */
module io.modelopt.scheduler {
    requires transitive io.modelopt.core;
    requires io.modelopt.kvcache;
    exports io.modelopt.scheduler;
}
