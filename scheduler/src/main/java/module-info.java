/** The continuous-batching engine: requests, the step loop, the scheduling policy, streaming handles and metrics. */
module io.modelopt.scheduler {
    requires transitive io.modelopt.core;
    requires io.modelopt.kvcache;
    exports io.modelopt.scheduler;
    provides io.modelopt.core.spi.EngineProvider with io.modelopt.scheduler.EngineService;
}
