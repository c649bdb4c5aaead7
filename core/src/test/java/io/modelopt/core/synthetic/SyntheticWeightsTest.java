package io.modelopt.core.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SyntheticWeightsTest {
    /** Quantiles of N(0,1) from tables (R's qnorm), to 1e-8. */
    @Test
    void inverseNormalCdfMatchesPublishedQuantiles() {
        assertEquals(0.0, SyntheticWeights.inverseNormalCdf(0.5), 1e-12);
        assertEquals(1.959963984540054, SyntheticWeights.inverseNormalCdf(0.975), 1e-8);
        assertEquals(-2.326347874040841, SyntheticWeights.inverseNormalCdf(0.01), 1e-8);
        assertEquals(3.090232306167814, SyntheticWeights.inverseNormalCdf(0.999), 1e-8);
        assertEquals(-4.264890793922825, SyntheticWeights.inverseNormalCdf(1e-5), 1e-7);
    }

    @Test
    void valuesAreGaussianWithTheRequestedStdAndExactInFloat16() {
        SyntheticWeights w = new SyntheticWeights(42, 0.02f);
        long key = w.tensorKey("blk.0.ffn_up.weight");
        int n = 1 << 20;
        float[] v = new float[n];
        w.fill(key, 0, v, 0, n);
        double sum = 0, sumSq = 0, sum4 = 0;
        int beyond2Sigma = 0;
        for (float x : v) {
            assertEquals(x, Float.float16ToFloat(Float.floatToFloat16(x)), "not a float16 value: " + x);
            sum += x;
            sumSq += (double) x * x;
            sum4 += Math.pow(x / 0.02, 4);
            if (Math.abs(x) > 0.04) beyond2Sigma++;
        }
        double mean = sum / n, std = Math.sqrt(sumSq / n - mean * mean);
        // standard errors for n = 2^20: mean 2e-5, std 1.4e-5 (relative 0.07 %), kurtosis 0.0024
        assertEquals(0, mean, 1e-4);
        assertEquals(0.02, std, 0.02 * 0.005);
        assertEquals(3.0, sum4 / n, 0.03);
        // P(|Z| > 2) = 4.55 %
        assertEquals(0.0455, beyond2Sigma / (double) n, 0.002);
    }

    @Test
    void fillEqualsValueAtEveryOffsetAndStreamsDiffer() {
        SyntheticWeights w = new SyntheticWeights(1, 0.02f);
        long key = w.tensorKey("token_embd.weight");
        float[] v = new float[103];
        for (int first : new int[] {0, 1, 2, 3, 4, 1001}) {
            w.fill(key, first, v, 0, v.length);
            for (int i = 0; i < v.length; i++) assertEquals(w.value(key, first + i), v[i], "element " + (first + i));
        }
        assertNotEquals(key, w.tensorKey("output.weight"));
        assertNotEquals(key, new SyntheticWeights(2, 0.02f).tensorKey("token_embd.weight"));
        float[] a = new float[64], b = new float[64];
        w.fill(key, 0, a, 0, 64);
        w.fill(w.tensorKey("output.weight"), 0, b, 0, 64);
        int same = 0;
        for (int i = 0; i < 64; i++) if (a[i] == b[i]) same++;
        assertTrue(same < 8, same + " of 64 equal");
    }

    @Test
    void vocabularyMergesBuildEveryWordPiece() {
        SyntheticVocabulary v = new SyntheticVocabulary(SyntheticSpec.MICRO.vocabSize());
        Set<String> tokens = new HashSet<>(v.tokens());
        assertEquals(v.size(), tokens.size(), "duplicate tokens");
        List<String> merges = v.merges();
        int lastId = -1;
        for (String m : merges) {
            String[] p = m.split(" ");
            assertEquals(2, p.length, m);
            assertTrue(tokens.contains(p[0]) && tokens.contains(p[1]), m);
            int id = v.tokens().indexOf(p[0] + p[1]);
            assertTrue(id > lastId, "merge " + m + " out of score order");
            lastId = id;
        }
        assertEquals(v.size() - SyntheticVocabulary.FIRST_PIECE - 12, merges.size());
        assertEquals("\u2581w123", v.tokens().get(v.wordId(123)));
        float[] s = v.scores();
        for (int i = SyntheticVocabulary.FIRST_PIECE + 1; i < v.size(); i++) assertTrue(s[i] < s[i - 1]);
        assertTrue(v.tokenizerJson().contains("\"byte_fallback\": true"));
    }
}
