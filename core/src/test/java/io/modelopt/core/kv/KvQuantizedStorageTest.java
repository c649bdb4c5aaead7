package io.modelopt.core.kv;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/** BF16, INT8 and FP8 entries: what the storage writes and reads back, against references in double; scale layouts and their errors. */
class KvQuantizedStorageTest {
    private static final int LAYERS = 2, HEADS = 3, DIM = 8, BLOCKS = 4, BLOCK = 8;

    private static float[] row(Random r) {
        float[] x = new float[HEADS * DIM];
        for (int i = 0; i < x.length; i++) x[i] = (float) (r.nextGaussian() * (1 + i % 5) * 3);
        return x;
    }

    @Test
    void int8HasOneAbsmaxScalePerTokenAndHead() {
        Random r = new Random(1);
        try (var s = new HostKvStorage(KvLayout.of(LAYERS, HEADS, DIM, BLOCKS, BLOCK, KvDtype.INT8))) {
            assertEquals(KvScaleLayout.PER_TOKEN_HEAD, s.layout().scales());
            for (long slot : new long[] {0, 7, 13, 31}) {
                float[] x = row(r), back = new float[x.length];
                s.writeKey(1, slot, x, 0);
                s.readKey(1, slot, back, 0);
                for (int h = 0; h < HEADS; h++) {
                    double amax = 0;
                    for (int i = 0; i < DIM; i++) amax = Math.max(amax, Math.abs(x[h * DIM + i]));
                    double scale = amax / 127;
                    assertEquals(scale, s.keyScales(1).getAtIndex(KvStorage.F32_LE, s.layout().scaleIndex(slot, h)), 1e-6 * scale);
                    for (int i = 0; i < DIM; i++) {
                        double expected = Math.rint(x[h * DIM + i] / scale) * scale;
                        assertEquals(expected, back[h * DIM + i], 1e-5 * amax, "slot " + slot + " head " + h + " element " + i);
                    }
                }
            }
        }
    }

    @Test
    void fp8UsesTheLayerScaleOneByDefault() {
        Random r = new Random(2);
        for (KvScaleLayout sl : new KvScaleLayout[] {KvScaleLayout.PER_LAYER, KvScaleLayout.PER_LAYER_HEAD}) {
            try (var s = new HostKvStorage(new KvLayout(LAYERS, HEADS, DIM, BLOCKS, BLOCK, KvDtype.FP8_E4M3, sl))) {
                float[] x = row(r), back = new float[x.length];
                s.writeValue(0, 9, x, 0);
                s.readValue(0, 9, back, 0);
                for (int i = 0; i < x.length; i++) assertEquals(Fp8E4M3.decode(Fp8E4M3.encode(x[i])), back[i], 0f);
                float[] ks = new float[(int) s.layout().scalesPerLayer()], vs = ks.clone();
                for (int i = 0; i < ks.length; i++) {
                    ks[i] = 0.01f * (i + 1);
                    vs[i] = 0.02f * (i + 1);
                }
                s.setStaticScales(0, ks, vs);
                s.writeValue(0, 9, x, 0);
                s.readValue(0, 9, back, 0);
                for (int h = 0; h < HEADS; h++) {
                    float sc = vs[sl == KvScaleLayout.PER_LAYER ? 0 : h];
                    for (int i = 0; i < DIM; i++) {
                        int k = h * DIM + i;
                        assertEquals(Fp8E4M3.decode(Fp8E4M3.encode(x[k] / sc)) * sc, back[k], 0f);
                    }
                }
                var e = assertThrows(IllegalArgumentException.class, () -> s.setStaticScales(0, new float[ks.length], vs));
                assertTrue(e.getMessage().contains("> 0"), e.getMessage());
            }
        }
    }

    @Test
    void bf16RoundsToNearestEven() {
        try (var s = new HostKvStorage(KvLayout.of(1, 1, 8, 1, 8, KvDtype.BF16))) {
            float[] x = {1f, 1 + 0x1p-8f, 1 + 0x1p-8f + 0x1p-20f, 1 + 3 * 0x1p-8f, -2.5e-3f, 65504f, 1e30f, 0f};
            float[] expected = {1f, 1f, 1 + 0x1p-7f, 1 + 0x1p-6f, 0, 65536f, 0, 0f};
            float[] back = new float[8];
            s.writeKey(0, 3, x, 0);
            s.readKey(0, 3, back, 0);
            for (int i = 0; i < 4; i++) assertEquals(expected[i], back[i], 0f, "element " + i);
            assertEquals(x[4], back[4], Math.abs(x[4]) / 128);
            assertEquals(expected[5], back[5], 0f);
            assertEquals(x[6], back[6], x[6] / 128);
        }
    }

    @Test
    void bytesPerTokenCountScales() {
        // the 1.1B synthetic shape: 22 layers, 4 KV heads x 64
        double f16 = KvLayout.of(22, 4, 64, 1, 16, KvDtype.F16).bytesPerToken();
        double int8 = KvLayout.of(22, 4, 64, 1, 16, KvDtype.INT8).bytesPerToken();
        double fp8 = KvLayout.of(22, 4, 64, 1, 16, KvDtype.FP8_E4M3).bytesPerToken();
        assertEquals(2 * 22 * 256 * 2, f16);
        assertEquals(2 * 22 * (256 + 4 * 4), int8);
        assertEquals(2 * 22 * 256, fp8);
        assertTrue(int8 <= 0.55 * f16, int8 / f16 + "");
        KvLayout l = KvLayout.of(22, 4, 64, 10, 16, KvDtype.INT8);
        assertEquals(l.byteSize(), 10 * l.bytesPerBlock());
    }

    @Test
    void aScaleLayoutTheDtypeCannotTakeIsRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new KvLayout(1, 1, 8, 1, 8, KvDtype.INT8, KvScaleLayout.PER_BLOCK_HEAD));
        assertTrue(e.getMessage().contains("INT8") && e.getMessage().contains("PER_TOKEN_HEAD"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new KvLayout(1, 1, 8, 1, 8, KvDtype.F16, KvScaleLayout.PER_LAYER));
        var p = assertThrows(IllegalArgumentException.class, () -> KvDtype.parse("q4"));
        assertTrue(p.getMessage().contains("int8") && p.getMessage().contains("fp8"), p.getMessage());
        assertEquals(KvDtype.FP8_E4M3, KvDtype.parse("fp8"));
    }
}
