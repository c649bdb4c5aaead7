package io.modelopt.core.kernel;

import io.modelopt.core.kv.HostKvStorage;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Attention read in place from storage of every KV dtype, with the dequantization inside the
 * kernel, against a float64 attention over the entries the storage reads back (its reference
 * dequantization): head sizes 8 (stories260K), 20 (a vector tail) and 64, GQA groups of 1 and 3,
 * positions in shuffled blocks, more positions than one {@link AttentionKernel#ROW_CHUNK}. F16 within
 * 1e-3 only: its weights are rounded to F16 as llama.cpp does (see {@link AttentionKernel}).
 */
class KvDtypeAttentionTest {

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (KvDtype dt : KvDtype.values()) for (KernelMode mode : new KernelMode[] {KernelMode.SCALAR, KernelMode.VECTOR})
            for (int headDim : new int[] {8, 20, 64, 128}) b.add(Arguments.of(dt, mode, headDim));
        return b.build();
    }

    @ParameterizedTest @MethodSource("cases")
    void matchesAFloat64AttentionOverTheDequantizedEntries(KvDtype dt, KernelMode mode, int headDim) {
        int kvHeads = 2, block = 16, blocks = 12, n = 150, group = 3;
        Random r = new Random(headDim * 31L + dt.ordinal());
        try (var kv = new HostKvStorage(KvLayout.of(1, kvHeads, headDim, blocks, block, dt))) {
            KvLayout l = kv.layout();
            List<Integer> physical = new ArrayList<>();
            for (int i = 0; i < blocks; i++) physical.add(i);
            Collections.shuffle(physical, r);
            long[] slots = new long[n], offs = new long[n];
            float[] entry = new float[l.kvDim()];
            for (int p = 0; p < n; p++) {
                slots[p] = (long) physical.get(p / block) * block + p % block;
                offs[p] = l.entryOffset(slots[p]);
                for (int i = 0; i < entry.length; i++) entry[i] = (float) r.nextGaussian() * 2;
                kv.writeKey(0, slots[p], entry, 0);
                for (int i = 0; i < entry.length; i++) entry[i] = (float) r.nextGaussian();
                kv.writeValue(0, slots[p], entry, 0);
            }
            float[] q = new float[group * headDim];
            for (int i = 0; i < q.length; i++) q[i] = (float) r.nextGaussian();
            float scale = (float) (1 / Math.sqrt(headDim));
            for (int h = 0; h < kvHeads; h++) {
                float[] out = new float[group * headDim], scores = new float[group * n];
                AttentionKernel.attend(mode, q, 0, group, headDim, scale, kv, 0, offs, h * l.headStride(), n, scores, n,
                        new float[AttentionKernel.rowScratch(headDim)], out, 0);
                for (int g = 0; g < group; g++) {
                    double[] ref = reference(kv, slots, h, q, g * headDim, headDim, scale);
                    for (int d = 0; d < headDim; d++) {
                        assertEquals(ref[d], out[g * headDim + d], dt == KvDtype.F16 ? 1e-3 : 2e-5, dt + " " + mode + " head size " + headDim + " kv head " + h + " query " + g + " d " + d);
                    }
                }
            }
        }
    }

    /** The vector dequantization (bit moves, widening loads) gives exactly the scalar one's floats, subnormal FP8 and tails included. */
    @ParameterizedTest @MethodSource("cases")
    void vectorDequantizationEqualsScalar(KvDtype dt, KernelMode ignored, int headDim) {
        int heads = 2, block = 16, n = 40;
        Random r = new Random(headDim + 100L * dt.ordinal());
        try (var kv = new HostKvStorage(KvLayout.of(1, heads, headDim, 3, block, dt))) {
            KvLayout l = kv.layout();
            long[] offs = new long[n];
            float[] e = new float[l.kvDim()];
            for (int p = 0; p < n; p++) {
                offs[p] = l.entryOffset(p);
                double mag = Math.pow(2, r.nextInt(30) - 18); // down to FP8's subnormals
                for (int i = 0; i < e.length; i++) e[i] = (float) (r.nextGaussian() * mag);
                kv.writeKey(0, p, e, 0);
            }
            for (int h = 0; h < heads; h++) {
                float[] a = new float[n * headDim], b = new float[n * headDim];
                KvRows.gather(l, kv.keys(0), kv.keyScales(0), offs, 0, n, h * l.headStride(), a, true);
                KvRows.gather(l, kv.keys(0), kv.keyScales(0), offs, 0, n, h * l.headStride(), b, false);
                assertArrayEquals(b, a, dt + " head size " + headDim);
            }
        }
    }

    private static double[] reference(HostKvStorage kv, long[] slots, int h, float[] q, int qOff, int headDim, float scale) {
        int n = slots.length, kvDim = kv.layout().kvDim();
        double[] s = new double[n];
        float[] k = new float[kvDim], v = new float[kvDim];
        double max = Double.NEGATIVE_INFINITY;
        for (int p = 0; p < n; p++) {
            kv.readKey(0, slots[p], k, 0);
            double dot = 0;
            for (int d = 0; d < headDim; d++) dot += (double) q[qOff + d] * k[h * headDim + d];
            s[p] = dot * scale;
            max = Math.max(max, s[p]);
        }
        double sum = 0;
        for (int p = 0; p < n; p++) sum += s[p] = Math.exp(s[p] - max);
        double[] out = new double[headDim];
        for (int p = 0; p < n; p++) {
            kv.readValue(0, slots[p], v, 0);
            for (int d = 0; d < headDim; d++) out[d] += s[p] / sum * v[h * headDim + d];
        }
        return out;
    }
}
