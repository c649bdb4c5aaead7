package io.modelopt.core.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.llama.TinyLlama;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A decode step through the graph and the CPU ops allocates nothing once compiled, on a cache
 * and on block-table storage, with and without an observer (one thread: the caller runs every task).
 */
class RunnerAllocationTest {
    @Tag("allocation") // run in a JVM of its own (see the parent pom)
    @Test
    void steadyStateDecodeStepsDoNotAllocate() throws ReflectiveOperationException {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
        RunnerOptions o = RunnerOptions.builder().threads(1).kernelMode(KernelMode.SCALAR).kvDtype(KvDtype.F16).maxBatchTokens(8).build();
        try (TinyLlama model = new TinyLlama(BlockTableKvTest.config(), 4); ModelRunner runner = CpuLlamaRunner.load(model, o);
             KvCache cache = runner.newKvCache(1, 32); KvStorage storage = runner.newKvStorage(4, 8)) {
            int[] prompt = {1, 5, 9, 13, 17};
            runner.forward(Batch.ofSequence(0, 0, prompt, false), cache);
            Batch step = Batch.decodeStep(new int[] {0}, new int[] {3}, new int[] {prompt.length});
            Batch.Builder tabled = Batch.builder().blockSize(8).blockTable(0, new int[] {2});
            tabled.addSequence(0, 0, prompt, 0, prompt.length, false);
            runner.forward(tabled.build(), storage);
            Batch tabledStep = Batch.builder().add(3, prompt.length, 0, true).blockSize(8).blockTable(0, new int[] {2}).build();
            float[] sink = new float[1];
            for (boolean observed : new boolean[] {false, true}) {
                runner.observe(observed ? (layer, input, rows, tokens, cols) -> sink[0] += rows[0] : null);
                long allocated = Long.MAX_VALUE;
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (allocated >= 1024 && System.nanoTime() < deadline) {
                    long before = (Long) allocatedBytes.invoke(bean);
                    for (int i = 0; i < 50; i++) {
                        runner.forward(step, cache);
                        runner.forward(tabledStep, storage);
                    }
                    allocated = (Long) allocatedBytes.invoke(bean) - before;
                }
                assertTrue(allocated < 1024, allocated + " bytes allocated by 100 decode steps" + (observed ? " with an observer" : ""));
            }
        }
    }
}
