package io.modelopt.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.synthetic.SyntheticSpec;
import org.junit.jupiter.api.Test;

/** The KV counter against the storage written out by hand for small125m (12 layers, 12 KV heads of 64). */
class KvBytesBenchmarkTest {
    private static final int LAYERS = 12, KV_DIM = 12 * 64, HEADS = 12;

    @Test
    void bytesPerTokenOfSmall125m() {
        SyntheticSpec spec = SyntheticSpec.preset("small125m");
        // keys and values (2) of every layer, kvDim elements each
        assertEquals(2.0 * LAYERS * KV_DIM * 2, KvBytesBenchmark.layout(spec, KvDtype.F16, 16).bytesPerToken());
        assertEquals(2.0 * LAYERS * KV_DIM * 4, KvBytesBenchmark.layout(spec, KvDtype.F32, 16).bytesPerToken());
        // INT8: one byte an element plus one F32 scale per token and KV head
        assertEquals(2.0 * LAYERS * (KV_DIM + 4 * HEADS), KvBytesBenchmark.layout(spec, KvDtype.INT8, 16).bytesPerToken());
        // FP8: one scale per layer for K and one for V, nothing per token
        assertEquals(2.0 * LAYERS * KV_DIM, KvBytesBenchmark.layout(spec, KvDtype.FP8_E4M3, 16).bytesPerToken());
    }

    @Test
    void stageCounterIsTheStageDtypes() {
        SyntheticSpec spec = SyntheticSpec.preset("small125m");
        assertEquals(KvDtype.F16, Stage.BASELINE.kvDtype());
        assertEquals(KvDtype.INT8, Stage.INT4_INT8KV_ENGINE.kvDtype());
        // stage 4's KV is 0.53x the baseline's at head size 64 (68 bytes instead of 128 per head-entry)
        assertEquals(68.0 / 128, KvBytesBenchmark.layout(spec, Stage.INT4_INT8KV_ENGINE.kvDtype(), 16).bytesPerToken()
                / KvBytesBenchmark.layout(spec, Stage.BASELINE.kvDtype(), 16).bytesPerToken(), 1e-12);
    }
}
