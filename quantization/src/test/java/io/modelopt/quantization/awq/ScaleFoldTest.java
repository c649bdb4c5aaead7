package io.modelopt.quantization.awq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Folding AWQ's scales leaves the float computation unchanged within float rounding: the norm
 * into q (through RMS norm), v into o (through per-head attention weights), up into down (through
 * SwiGLU); and unscaling after scaling gives the weights back.
 */
class ScaleFoldTest {
    final Random rnd = new Random(3);

    float[] random(int n, double sd) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (rnd.nextGaussian() * sd);
        return a;
    }

    float[] scales(int n) {
        float[] s = new float[n];
        for (int i = 0; i < n; i++) s[i] = (float) Math.exp(rnd.nextGaussian());
        return s;
    }

    static float[] matvec(float[] w, int rows, int cols, float[] x) {
        float[] y = new float[rows];
        for (int r = 0; r < rows; r++) {
            float a = 0;
            for (int c = 0; c < cols; c++) a += w[r * cols + c] * x[c];
            y[r] = a;
        }
        return y;
    }

    static void assertClose(float[] a, float[] b, String what) {
        double scale = 0;
        for (float v : a) scale = Math.max(scale, Math.abs(v));
        for (int i = 0; i < a.length; i++) assertEquals(a[i], b[i], 1e-5 * scale, what + " " + i);
    }

    @Test void normIntoLinear() {
        int h = 64, out = 32;
        float[] x = random(h, 1), g = random(h, 1), w = random(out * h, 0.1), s = scales(h);
        float[] before = matvec(w, out, h, rmsnorm(x, g));
        float[] g2 = g.clone(), w2 = w.clone();
        ScaleFold.unscaleNorm(g2, s);
        ScaleFold.scaleColumns(w2, out, h, s);
        assertClose(before, matvec(w2, out, h, rmsnorm(x, g2)), "norm fold");
        ScaleFold.unscaleColumns(w2, out, h, s);
        assertClose(w, w2, "unscale");
    }

    @Test void vIntoOThroughAttention() {
        int h = 32, heads = 4, hd = 8, tokens = 5;
        float[] wv = random(h * h, 0.2), wo = random(h * h, 0.2), s = scales(h);
        float[][] x = new float[tokens][];
        for (int t = 0; t < tokens; t++) x[t] = random(h, 1);
        float[][] p = new float[heads][tokens]; // one query's attention weights per head
        for (float[] row : p) for (int t = 0; t < tokens; t++) row[t] = rnd.nextFloat();
        float[] before = attention(wv, wo, x, p, h, hd), wv2 = wv.clone(), wo2 = wo.clone();
        ScaleFold.unscaleRows(wv2, h, h, s);
        ScaleFold.scaleColumns(wo2, h, h, s);
        assertClose(before, attention(wv2, wo2, x, p, h, hd), "v/o fold");
        ScaleFold.scaleRows(wv2, h, h, s);
        assertClose(wv, wv2, "unscale rows");
    }

    @Test void upIntoDownThroughSwiGlu() {
        int h = 32, f = 96;
        float[] x = random(h, 1), wg = random(f * h, 0.2), wu = random(f * h, 0.2), wd = random(h * f, 0.2), s = scales(f);
        float[] before = mlp(x, wg, wu, wd, h, f), wu2 = wu.clone(), wd2 = wd.clone();
        ScaleFold.unscaleRows(wu2, f, h, s);
        ScaleFold.scaleColumns(wd2, h, f, s);
        assertClose(before, mlp(x, wg, wu2, wd2, h, f), "up/down fold");
    }

    static float[] rmsnorm(float[] x, float[] g) {
        double ss = 0;
        for (float v : x) ss += v * v;
        float inv = (float) (1 / Math.sqrt(ss / x.length + 1e-5));
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) y[i] = x[i] * inv * g[i];
        return y;
    }

    static float[] attention(float[] wv, float[] wo, float[][] x, float[][] p, int h, int hd) {
        float[] mix = new float[h];
        for (int t = 0; t < x.length; t++) {
            float[] v = matvec(wv, h, h, x[t]);
            for (int c = 0; c < h; c++) mix[c] += p[c / hd][t] * v[c];
        }
        return matvec(wo, h, h, mix);
    }

    static float[] mlp(float[] x, float[] wg, float[] wu, float[] wd, int h, int f) {
        float[] g = matvec(wg, f, h, x), u = matvec(wu, f, h, x), a = new float[f];
        for (int i = 0; i < f; i++) a[i] = (float) (g[i] / (1 + Math.exp(-g[i]))) * u[i];
        return matvec(wd, h, f, a);
    }
}
