package io.modelopt.core.kv;

import io.modelopt.core.synthetic.SyntheticSpec;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

/** Budgets to exact block counts (numbers worked out by hand from the dims), and the build-time failures with their numbers. */
class KvBudgetTest {
    private static final MemoryProbe NONE = MemoryProbe.of(Long.MAX_VALUE, Long.MAX_VALUE);

    @Test
    void parsesBytesWithUnitsAndFractions() {
        assertEquals(512L << 20, KvBudget.parse("512MiB").resolveBytes(NONE));
        assertEquals(1L << 30, KvBudget.parse("1GiB").resolveBytes(NONE));
        assertEquals(1_500_000_000L, KvBudget.parse("1.5GB").resolveBytes(NONE));
        assertEquals(4096, KvBudget.parse("4096b").resolveBytes(NONE));
        assertTrue(KvBudget.parse("0.3").isFraction());
        // a fraction of the smaller of MemAvailable and the cgroup headroom
        assertEquals(300, KvBudget.parse("0.3").resolveBytes(MemoryProbe.of(1000, 5000)));
        assertEquals(150, KvBudget.parse("0.3").resolveBytes(MemoryProbe.of(1000, 500)));
        var e = assertThrows(IllegalArgumentException.class, () -> KvBudget.parse("512"));
        assertTrue(e.getMessage().contains("unit"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KvBudget.parse("lots"));
        assertThrows(IllegalArgumentException.class, () -> KvBudget.fraction(1.5));
    }

    @Test
    void sequencesOf2048TokensInOneGiBForThe11BShape() {
        SyntheticSpec s = SyntheticSpec.TINY_1B; // 22 layers, 4 KV heads x 64
        // per block of 16 tokens: 2 (K, V) x 22 layers x 4 heads x 16 tokens x 64 x bytes (+ INT8: 4-byte scale per token and head)
        long f16Block = 2L * 22 * 4 * 16 * 64 * 2, int8Block = 2L * 22 * 4 * 16 * (64 + 4), fp8Block = 2L * 22 * 4 * 16 * 64;
        long budget = 1L << 30;
        for (var c : new Object[][] {{KvDtype.F32, 2 * f16Block, 0L}, {KvDtype.F16, f16Block, 0L}, {KvDtype.INT8, int8Block, 0L}, {KvDtype.FP8_E4M3, fp8Block, 2L * 22 * 4}}) {
            KvDtype d = (KvDtype) c[0];
            long perBlock = (long) c[1], fixed = (long) c[2];
            KvBudget.Plan p = KvBudget.bytes(budget).plan(s.numLayers(), s.numKvHeads(), s.headDim(), d, 16, 2048, NONE);
            assertEquals((budget - fixed) / perBlock, p.numBlocks(), d.toString());
            assertEquals(p.numBlocks() / 128, p.sequencesOf(2048), d.toString());
            assertTrue(p.layout().byteSize() <= budget);
        }
        assertEquals(23, KvBudget.bytes(budget).plan(22, 4, 64, KvDtype.F16, 16, 2048, NONE).sequencesOf(2048));
        assertEquals(43, KvBudget.bytes(budget).plan(22, 4, 64, KvDtype.INT8, 16, 2048, NONE).sequencesOf(2048));
        assertEquals(46, KvBudget.bytes(budget).plan(22, 4, 64, KvDtype.FP8_E4M3, 16, 2048, NONE).sequencesOf(2048));
    }

    @Test
    void failsAtBuildTimeWithBothNumbersAndWhatToChange() {
        var e = assertThrows(IllegalArgumentException.class, () -> KvBudget.parse("32MiB").plan(22, 4, 64, KvDtype.F16, 16, 2048, NONE));
        String m = e.getMessage();
        assertTrue(m.contains("33,554,432 bytes") && m.contains("2,048") && m.contains("46,137,344 bytes"), m);
        assertTrue(m.contains("maximum length of at most 1,488") && m.contains("int8") && m.contains("budget of at least"), m);
        var small = assertThrows(IllegalArgumentException.class, () -> KvBudget.parse("1KiB").plan(22, 4, 64, KvDtype.F16, 16, 2048, NONE));
        assertTrue(small.getMessage().contains("smaller than one block") && small.getMessage().contains("360,448"), small.getMessage());
    }
}
