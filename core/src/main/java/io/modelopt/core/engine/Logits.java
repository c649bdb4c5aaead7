package io.modelopt.core.engine;

/**
 * The logits a {@link ModelRunner#forward} call produced: one row of {@code vocabSize} floats per
 * token of the batch that asked for them, in batch order.
 *
 * <p><b>Lifetime:</b> a view of the runner's preallocated buffer, not a copy. It is valid until
 * the next {@code forward} on the same runner (which overwrites the buffer and reuses this
 * object) or until the runner is closed. Copy a row ({@link #copyRow}) to keep it longer.
 */
public final class Logits {
    private final float[] buffer;
    private final int vocabSize;
    private Batch batch;
    private int rows;

    /** For runners: wraps a buffer of at least {@code maxRows × vocabSize} floats. */
    public Logits(float[] buffer, int vocabSize) {
        this.buffer = buffer;
        this.vocabSize = vocabSize;
    }

    /** For runners: points this view at the rows of {@code batch}'s flagged tokens. */
    public void reset(Batch batch) {
        if ((long) batch.logitsCount() * vocabSize > buffer.length) {
            throw new IllegalArgumentException(batch.logitsCount() + " logits rows do not fit a buffer of " + buffer.length / vocabSize + " rows");
        }
        this.batch = batch;
        this.rows = batch.logitsCount();
    }

    public int rows() { return rows; }

    public int vocabSize() { return vocabSize; }

    /** Index in the batch of the token whose logits are {@code row}. */
    public int batchIndex(int row) { return batch.logitsTokenIndex(check(row)); }

    public int sequenceId(int row) { return batch.sequenceId(batchIndex(row)); }

    public int position(int row) { return batch.position(batchIndex(row)); }

    public float get(int row, int token) {
        if (token < 0 || token >= vocabSize) throw new IndexOutOfBoundsException("token " + token + " outside vocabulary of " + vocabSize);
        return buffer[offset(row) + token];
    }

    /** Copies row {@code row} into {@code dst[off .. off+vocabSize)}. */
    public void copyRow(int row, float[] dst, int off) {
        System.arraycopy(buffer, offset(row), dst, off, vocabSize);
    }

    /** A fresh copy of one row. */
    public float[] row(int row) {
        float[] r = new float[vocabSize];
        copyRow(row, r, 0);
        return r;
    }

    /** The token with the largest logit (the lowest id on ties, as llama.cpp's greedy sampler). */
    public int argmax(int row) {
        int off = offset(row), best = 0;
        float bestValue = buffer[off];
        for (int i = 1; i < vocabSize; i++) {
            if (buffer[off + i] > bestValue) {
                bestValue = buffer[off + i];
                best = i;
            }
        }
        return best;
    }

    /** The backing buffer, for zero-copy readers: row r starts at {@link #offset(int) offset(r)}. Do not write. */
    public float[] buffer() { return buffer; }

    public int offset(int row) { return check(row) * vocabSize; }

    private int check(int row) {
        if (row < 0 || row >= rows) throw new IndexOutOfBoundsException("logits row " + row + " of " + rows);
        return row;
    }
}
