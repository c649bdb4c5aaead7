package io.modelopt.core.engine;

import io.modelopt.core.backend.cpu.CpuBackend;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.testing.Fixtures;
import org.junit.jupiter.api.Test;

class BackendTest {
    @Test
    void cpuBackendIsRegisteredAndRunsAModel() {
        Backend cpu = Backend.named("cpu");
        assertInstanceOf(CpuBackend.class, cpu);
        assertTrue(cpu.isAvailable());
        try (var src = GgufModelSource.open(Fixtures.storiesGguf("f32"));
             ModelRunner runner = cpu.load(src, RunnerOptions.builder().threads(1).maxBatchTokens(8).maxLogitsRows(2).build());
             KvCache cache = runner.newKvCache()) {
            assertEquals(KvDtype.F16, cache.dtype());
            assertEquals(1, cache.maxSequences());
            assertEquals(128, cache.capacity(0));
            Logits l = runner.forward(Batch.ofSequence(0, 0, new int[] {1, 403, 407, 261, 378}, false), cache);
            assertEquals(1, l.rows());
            assertEquals(4, l.position(0));
            assertEquals(0, l.sequenceId(0));
            assertEquals(4, l.batchIndex(0));
            assertEquals(432, l.argmax(0), "stories260K continues 'Once upon a time' with ','");
            assertEquals(l.get(0, 432), l.row(0)[432]);
            assertThrows(IndexOutOfBoundsException.class, () -> l.get(1, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> l.get(0, 512));
            var e = assertThrows(IllegalArgumentException.class,
                    () -> runner.forward(Batch.ofSequence(0, 5, new int[] {1, 2, 3}, true), cache));
            assertTrue(e.getMessage().contains("3 logits rows") && e.getMessage().contains("maxLogitsRows 2"), e.getMessage());
        }
    }

    @Test
    void unknownBackendListsTheKnownOnes() {
        var e = assertThrows(IllegalArgumentException.class, () -> Backend.named("tpu"));
        assertTrue(e.getMessage().contains("tpu") && e.getMessage().contains("cpu"), e.getMessage());
    }

    @Test
    void optionsValidate() {
        assertThrows(IllegalArgumentException.class, () -> RunnerOptions.builder().threads(0).build());
        assertThrows(IllegalArgumentException.class, () -> RunnerOptions.builder().maxBatchTokens(4).maxLogitsRows(5).build());
        assertThrows(IllegalArgumentException.class, () -> RunnerOptions.builder().contextLength(-1).build());
        RunnerOptions o = RunnerOptions.builder().maxBatchTokens(100).build();
        assertEquals(100, o.maxLogitsRows());
        assertEquals(KvDtype.F16, o.kvDtype());
        assertEquals(77, o.toBuilder().contextLength(77).build().effectiveContextLength(2048));
        assertEquals(2048, o.effectiveContextLength(2048));
    }
}
