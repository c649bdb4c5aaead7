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
        for (int group : new int[] {1, 3}) attendsLikeFloat64(dt, mode, headDim, group);
    }

    /** group 1 takes the fused INT8 kernel ({@link Int8Attention}) where it applies, group 3 the gathered rows. */
    private static void attendsLikeFloat64(KvDtype dt, KernelMode mode, int headDim, int group) {
        int kvHeads = 2, block = 16, blocks = 12, n = 150;
        Random r = new Random(headDim * 31L + dt.ordinal());
        try (var kv = new HostKvStorage(KvLayout.of(1, kvHeads, headDim, blocks, block, dt))) {
            KvLayout l = kv.layout();
            List<Integer> physical = shuffledBlocks(blocks, r);
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
                        assertEquals(ref[d], out[g * headDim + d], dt == KvDtype.F16 ? 1e-3 : 2e-5, dt + " " + mode + " head size " + headDim + " group " + group + " kv head " + h + " query " + g + " d " + d);
                    }
                }
            }
        }
    }

    /**
     * The fused INT8 kernel (one query head: dequantized in registers) gives exactly the gathered
     * path's floats (a group of two identical query heads: rows dequantized into a buffer), at
     * every head size it takes, over shuffled blocks and more than one {@link AttentionKernel#ROW_CHUNK}.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {8, 16, 32, 64, 96, 128})
    void fusedInt8EqualsGatheredRowsBitForBit(int headDim) {
        org.junit.jupiter.api.Assumptions.assumeTrue(KernelMode.vectorApiAvailable() && Int8Attention.handles(headDim),
                "head size " + headDim + " is not whole vectors here");
        int block = 16, blocks = 20, n = 301;
        Random r = new Random(headDim);
        try (var kv = new HostKvStorage(KvLayout.of(1, 1, headDim, blocks, block, KvDtype.INT8))) {
            KvLayout l = kv.layout();
            List<Integer> physical = shuffledBlocks(blocks, r);
            long[] offs = new long[n];
            float[] e = new float[headDim];
            for (int p = 0; p < n; p++) {
                long slot = (long) physical.get(p / block) * block + p % block;
                offs[p] = l.entryOffset(slot);
                for (int i = 0; i < headDim; i++) e[i] = (float) (r.nextGaussian() * (1 + p % 7));
                kv.writeKey(0, slot, e, 0);
                for (int i = 0; i < headDim; i++) e[i] = (float) r.nextGaussian();
                kv.writeValue(0, slot, e, 0);
            }
            float[] q = new float[2 * headDim];
            for (int i = 0; i < headDim; i++) q[i] = q[headDim + i] = (float) r.nextGaussian();
            float scale = (float) (1 / Math.sqrt(headDim));
            float[] fused = new float[headDim], gathered = new float[2 * headDim], rows = new float[AttentionKernel.rowScratch(headDim)];
            AttentionKernel.attend(KernelMode.VECTOR, q, 0, 1, headDim, scale, kv, 0, offs, 0, n, new float[n], n, rows, fused, 0);
            AttentionKernel.attend(KernelMode.VECTOR, q, 0, 2, headDim, scale, kv, 0, offs, 0, n, new float[2 * n], n, rows, gathered, 0);
            assertArrayEquals(java.util.Arrays.copyOf(gathered, headDim), fused, "head size " + headDim);
            assertArrayEquals(fused, java.util.Arrays.copyOfRange(gathered, headDim, 2 * headDim), "head size " + headDim);
        }
    }

    /**
     * The fused F16 kernel (one query head: halves widened in registers, {@link F16Attention}) over
     * shuffled blocks against the gathered path (a group of two identical query heads), with keys
     * and values over the whole range of halves, subnormals included: the weights (left in the
     * scores) within one F16 step and the outputs within 1e-3, since only the scores' lane sums are
     * grouped differently (a few ulps, which the weights' rounding to F16 can turn into one half's
     * step); and the same bits whether the blocks are shuffled or in order.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {8, 16, 32, 64, 96, 128})
    void fusedF16MatchesGatheredRowsAndIgnoresBlockPlacement(int headDim) {
        org.junit.jupiter.api.Assumptions.assumeTrue(KernelMode.vectorApiAvailable() && F16Attention.handles(headDim),
                "head size " + headDim + " is not whole pairs of vectors here");
        int block = 16, blocks = 20, n = 301;
        Random r = new Random(headDim);
        List<Integer> physical = shuffledBlocks(blocks, r);
        float[][] keys = new float[n][headDim], values = new float[n][headDim];
        for (int p = 0; p < n; p++) {
            double mag = Math.pow(2, r.nextInt(36) - 28); // 2^-28 .. 2^7: F16 subnormals up to large keys
            for (int i = 0; i < headDim; i++) {
                keys[p][i] = (float) (r.nextGaussian() * mag);
                values[p][i] = (float) (r.nextGaussian() * (p % 5 == 0 ? 1e-6 : 1));
            }
        }
        float[] q = new float[2 * headDim];
        for (int i = 0; i < headDim; i++) q[i] = q[headDim + i] = (float) r.nextGaussian() * 0.05f;
        float scale = (float) (1 / Math.sqrt(headDim));
        float[] fusedShuffled = null;
        for (boolean shuffled : new boolean[] {true, false}) {
            try (var kv = new HostKvStorage(KvLayout.of(1, 1, headDim, blocks, block, KvDtype.F16))) {
                KvLayout l = kv.layout();
                long[] offs = new long[n];
                for (int p = 0; p < n; p++) {
                    long slot = shuffled ? (long) physical.get(p / block) * block + p % block : p;
                    offs[p] = l.entryOffset(slot);
                    kv.writeKey(0, slot, keys[p], 0);
                    kv.writeValue(0, slot, values[p], 0);
                }
                float[] fused = new float[headDim], gathered = new float[2 * headDim], rows = new float[AttentionKernel.rowScratch(headDim)];
                float[] fusedWeights = new float[n], gatheredWeights = new float[2 * n];
                AttentionKernel.attend(KernelMode.VECTOR, q, 0, 1, headDim, scale, kv, 0, offs, 0, n, fusedWeights, n, rows, fused, 0);
                AttentionKernel.attend(KernelMode.VECTOR, q, 0, 2, headDim, scale, kv, 0, offs, 0, n, gatheredWeights, n, rows, gathered, 0);
                double sum = 0;
                for (int p = 0; p < n; p++) {
                    sum += fusedWeights[p];
                    // a score a few ulps off may round to the neighbouring half: one F16 step at most
                    assertEquals(gatheredWeights[p], fusedWeights[p], Math.abs(gatheredWeights[p]) * 0x1p-10 + 1e-12, "weight " + p + " head size " + headDim);
                }
                assertEquals(1, sum, 1e-2, "the weights are a softmax");
                for (int d = 0; d < headDim; d++) {
                    assertEquals(gathered[d], fused[d], 1e-3 * (1 + Math.abs(gathered[d])), "head size " + headDim + " d " + d);
                }
                if (shuffled) fusedShuffled = fused;
                else assertArrayEquals(fusedShuffled, fused, "the blocks' placement changes nothing, head size " + headDim);
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

    /** The physical blocks 0 .. blocks-1 in a random order: logical block i lives in physical block get(i). */
    private static List<Integer> shuffledBlocks(int blocks, Random r) {
        List<Integer> physical = new ArrayList<>();
        for (int i = 0; i < blocks; i++) physical.add(i);
        Collections.shuffle(physical, r);
        return physical;
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
