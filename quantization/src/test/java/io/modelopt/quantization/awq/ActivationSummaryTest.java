package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ActivationSummaryTest {
    @Test void meanAndEvenlySpacedSample() {
        int cols = 3, total = 1000;
        ActivationSummary a = new ActivationSummary(cols, 100);
        for (int start = 0; start < total; start += 70) { // batches of 70 rows, row t = (t, -t, 1)
            int n = Math.min(70, total - start);
            float[] rows = new float[n * cols];
            for (int i = 0; i < n; i++) {
                rows[i * cols] = start + i;
                rows[i * cols + 1] = -(start + i);
                rows[i * cols + 2] = 1;
            }
            a.accept(rows, n, cols);
        }
        assertArrayEquals(new float[] {499.5f, 499.5f, 1f}, a.meanAbs(), 1e-3f);
        // stride doubles at 200 kept rows: 1 -> 2 -> 4 -> 8; 1000 / 8 = 125 rows, tokens 0, 8, 16, ...
        assertEquals(125, a.sampledTokens());
        float[] s = a.sample();
        for (int i = 0; i < 125; i++) assertEquals(8f * i, s[i * cols]);
    }
}
