package io.modelopt.quantization.format;

import io.modelopt.core.kernel.WeightMatrix;

/**
 * Per-thread {@link IntRow}s of one scheme, one per row length, so that decoding or transcoding a
 * row allocates nothing in steady state. A model has a handful of row lengths (hidden, FFN, …):
 * a few slots, most recently used first, cover them without a map lookup.
 */
final class RowScratch {
    private static final int SLOTS = 8;

    private final IntScheme scheme;
    private final ThreadLocal<IntRow[]> rows = ThreadLocal.withInitial(() -> new IntRow[SLOTS]);

    RowScratch(IntScheme scheme) {
        this.scheme = scheme;
    }

    /** This thread's row of {@code cols} weights (reused: valid until the thread's next call). */
    IntRow forCols(int cols) {
        IntRow[] slots = rows.get();
        IntRow r = slots[0];
        if (r != null && r.codes.length == cols) return r;
        for (int i = 1; i < SLOTS; i++) {
            r = slots[i];
            if (r != null && r.codes.length == cols) {
                System.arraycopy(slots, 0, slots, 1, i);
                slots[0] = r;
                return r;
            }
        }
        r = new IntRow(scheme, cols);
        System.arraycopy(slots, 0, slots, 1, SLOTS - 1);
        slots[0] = r;
        return r;
    }

    /** Row {@code row} of {@code w} read by {@code layout} into this thread's scratch. */
    IntRow read(IntLayout layout, WeightMatrix w, int row) {
        IntRow r = forCols(w.cols());
        layout.readRow(w, row, r);
        return r;
    }
}
