package io.modelopt.quantization.gptq;

import io.modelopt.core.kernel.ComputePool;

/**
 * The upper Cholesky factor {@code U} of {@code H⁻¹} ({@code H⁻¹ = UᵀU}), what GPTQ computes as
 * {@code cholesky(cholesky_inverse(cholesky(H)), upper=True)}, in double precision with one
 * factorization and one triangular inverse instead of three steps: with {@code P} the reversal
 * permutation and {@code PHP = LLᵀ}, {@code H⁻¹ = P L⁻ᵀ L⁻¹ P = UᵀU} for {@code U = P L⁻¹ P}
 * (upper triangular, positive diagonal, hence the unique factor).
 *
 * <p>Both loops are row-wise axpys over contiguous memory, which the JIT vectorizes, split over
 * the pool's threads.
 */
final class CholeskyInverse {
    private CholeskyInverse() {}

    /**
     * @param h symmetric {@code n × n}, row-major (not modified)
     * @return {@code U}, row-major {@code n × n} (zeros below the diagonal), or null when {@code h}
     *         is not (numerically) positive definite
     */
    static double[] upperOfInverse(double[] h, int n, ComputePool pool) {
        // R = Lᵀ of the reversed matrix, built right-looking in the upper triangle
        double[] r = new double[n * n];
        for (int i = 0; i < n; i++) {
            for (int j = i; j < n; j++) r[i * n + j] = h[(n - 1 - i) * n + (n - 1 - j)];
        }
        for (int k = 0; k < n; k++) {
            double d = r[k * n + k];
            if (!(d > 0) || !Double.isFinite(d)) return null;
            d = Math.sqrt(d);
            int kk = k * n;
            r[kk + k] = d;
            double inv = 1 / d;
            for (int j = k + 1; j < n; j++) r[kk + j] *= inv;
            final int fk = k;
            int rest = n - k - 1;
            if (rest == 0) break;
            Runnable serial = () -> trailing(r, n, fk, fk + 1, n);
            if (pool == null || (long) rest * rest < 32_768) serial.run();
            else pool.parallelForDynamic(rest, 16, (s, e, w) -> trailing(r, n, fk, fk + 1 + s, fk + 1 + e));
        }
        // Y = R⁻¹ (upper), row by row from the bottom; columns are independent, so split by column ranges
        double[] y = new double[n * n];
        if (pool == null || n < 64) invertColumns(r, y, n, 0, n);
        else pool.parallelForDynamic((n + 31) / 32, 1, (s, e, w) -> invertColumns(r, y, n, s * 32, Math.min(n, e * 32)));
        // L⁻¹ = Yᵀ; U = P L⁻¹ P: U[i][j] = Y[n-1-j][n-1-i]
        double[] u = new double[n * n];
        for (int i = 0; i < n; i++) {
            for (int j = i; j < n; j++) u[i * n + j] = y[(n - 1 - j) * n + (n - 1 - i)];
        }
        return u;
    }

    /** Rows {@code [from, to)} of the trailing matrix minus the outer product of row {@code k}. */
    private static void trailing(double[] r, int n, int k, int from, int to) {
        int kk = k * n;
        for (int i = from; i < to; i++) {
            double f = r[kk + i];
            if (f == 0) continue;
            int ii = i * n;
            for (int j = i; j < n; j++) r[ii + j] -= f * r[kk + j];
        }
    }

    /** Columns {@code [c0, c1)} of {@code R⁻¹} by back substitution. */
    private static void invertColumns(double[] r, double[] y, int n, int c0, int c1) {
        for (int i = Math.min(n, c1) - 1; i >= 0; i--) {
            int ii = i * n;
            int j0 = Math.max(i, c0);
            if (i >= c0) y[ii + i] = 1;
            for (int k = i + 1; k < c1; k++) {
                double f = r[ii + k];
                if (f == 0) continue;
                int kk = k * n;
                for (int j = Math.max(k, c0); j < c1; j++) y[ii + j] -= f * y[kk + j];
            }
            double inv = 1 / r[ii + i];
            for (int j = j0; j < c1; j++) y[ii + j] *= inv;
        }
    }
}
