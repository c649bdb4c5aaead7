package io.modelopt.core.engine;

import java.util.Arrays;

/**
 * One step of work for {@link ModelRunner#forward}: a list of tokens, each with its position, the
 * sequence it belongs to and whether its logits are wanted. A single prompt is a batch of one
 * sequence; a decode step of B sequences is B tokens of B sequences; a scheduler's mixed step is
 * any mix. Every token of every sequence goes through each weight matrix in one GEMM.
 *
 * <p>Rules (checked by {@link Builder#build()}): at least one token; token ids, positions and
 * sequence ids are non-negative; the tokens of one sequence appear in the batch in order of
 * consecutive positions ({@code p, p+1, ...}; they need not be adjacent in the batch). Rules that
 * need the model or the cache (token id below the vocabulary size, position below the context
 * length, no gap after what the cache already holds) are checked by the runner.
 *
 * <p><b>Where the keys and values go.</b> With a {@link io.modelopt.core.kv.KvCache} the cache's
 * own mapping places them (the contiguous default). For bare {@link io.modelopt.core.kv.KvStorage}
 * (a paged cache, vLLM style) the batch carries the mapping: a block size and, per sequence, a
 * block table (logical block {@code i} of the sequence, positions {@code [i·blockSize, (i+1)·blockSize)},
 * lives in physical block {@code table[i]}); token {@code i}'s slot ({@link #slot(int)}, vLLM's
 * {@code slot_mapping}) is {@code table[pos / blockSize] · blockSize + pos % blockSize}.
 *
 * <p>Immutable. Logits rows come back in batch order of the flagged tokens: the k-th flagged
 * token's logits are row k.
 */
public final class Batch {
    private final int[] tokens;
    private final int[] positions;
    private final int[] sequenceIds;
    private final boolean[] wantLogits;
    private final int[] logitsTokenIndex;
    /** Distinct sequence ids in order of first appearance, with their first and last position in this batch. */
    private final int[] distinctSequences;
    private final int[] firstPositions;
    private final int[] lastPositions;
    /** For each token, the index of its sequence in {@link #distinctSequences}. */
    private final int[] sequenceIndex;
    /** 0 without block tables. */
    private final int blockSize;
    /** Per distinct sequence (index j): its physical blocks in logical order; null without block tables. */
    private final int[][] blockTables;
    /** Per token: the slot its key and value are written to; null without block tables. */
    private final long[] slotMapping;

    private Batch(int n, int[] tokens, int[] positions, int[] sequenceIds, boolean[] wantLogits, int blockSize, int[] tableSeqs, int[][] tables, int nTables) {
        this.tokens = Arrays.copyOf(tokens, n);
        this.positions = Arrays.copyOf(positions, n);
        this.sequenceIds = Arrays.copyOf(sequenceIds, n);
        this.wantLogits = Arrays.copyOf(wantLogits, n);
        if (n == 0) throw new IllegalArgumentException("a batch needs at least one token");
        int flagged = 0;
        int[] seqs = new int[Math.min(n, 16)], first = new int[seqs.length], last = new int[seqs.length];
        int nSeq = 0;
        this.sequenceIndex = new int[n];
        for (int i = 0; i < n; i++) {
            int tok = this.tokens[i], pos = this.positions[i], seq = this.sequenceIds[i];
            if (tok < 0) throw new IllegalArgumentException("batch token " + i + ": token id " + tok + " must be >= 0");
            if (pos < 0) throw new IllegalArgumentException("batch token " + i + ": position " + pos + " must be >= 0");
            if (seq < 0) throw new IllegalArgumentException("batch token " + i + ": sequence id " + seq + " must be >= 0");
            if (this.wantLogits[i]) flagged++;
            int j = indexOf(seqs, nSeq, seq);
            if (j < 0) {
                if (nSeq == seqs.length) {
                    seqs = Arrays.copyOf(seqs, nSeq * 2);
                    first = Arrays.copyOf(first, nSeq * 2);
                    last = Arrays.copyOf(last, nSeq * 2);
                }
                seqs[nSeq] = seq;
                first[nSeq] = pos;
                last[nSeq] = pos;
                sequenceIndex[i] = nSeq;
                nSeq++;
            } else {
                if (pos != last[j] + 1) {
                    throw new IllegalArgumentException("batch token " + i + " (sequence " + seq + "): position " + pos
                            + " does not follow position " + last[j] + " of the same sequence; a sequence's tokens must have consecutive positions");
                }
                last[j] = pos;
                sequenceIndex[i] = j;
            }
        }
        this.distinctSequences = Arrays.copyOf(seqs, nSeq);
        this.firstPositions = Arrays.copyOf(first, nSeq);
        this.lastPositions = Arrays.copyOf(last, nSeq);
        this.logitsTokenIndex = new int[flagged];
        for (int i = 0, k = 0; i < n; i++) if (this.wantLogits[i]) logitsTokenIndex[k++] = i;
        this.blockSize = blockSize;
        if (blockSize == 0) {
            if (nTables > 0) throw new IllegalArgumentException("block tables need a block size (Builder.blockSize)");
            this.blockTables = null;
            this.slotMapping = null;
        } else {
            this.blockTables = new int[nSeq][];
            for (int j = 0; j < nSeq; j++) {
                int seq = distinctSequences[j], t = indexOf(tableSeqs, nTables, seq);
                if (t < 0) throw new IllegalArgumentException("sequence " + seq + " has no block table (every sequence of a batch with block tables needs one)");
                int[] table = tables[t];
                long needed = lastPositions[j] / blockSize + 1;
                if (table.length < needed) {
                    throw new IllegalArgumentException("sequence " + seq + ": a block table of " + table.length + " blocks of " + blockSize
                            + " slots does not reach position " + lastPositions[j]);
                }
                for (int b = 0; b < needed; b++) {
                    if (table[b] < 0) throw new IllegalArgumentException("sequence " + seq + ": block table entry " + b + " is " + table[b] + ", must be >= 0");
                }
                blockTables[j] = table;
            }
            this.slotMapping = new long[n];
            for (int i = 0; i < n; i++) slotMapping[i] = slot(sequenceIndex[i], this.positions[i]);
        }
    }

    private static int indexOf(int[] a, int n, int v) {
        for (int i = 0; i < n; i++) if (a[i] == v) return i;
        return -1;
    }

    /** Number of tokens. */
    public int size() { return tokens.length; }

    public int token(int i) { return tokens[i]; }

    public int position(int i) { return positions[i]; }

    public int sequenceId(int i) { return sequenceIds[i]; }

    public boolean wantsLogits(int i) { return wantLogits[i]; }

    /** How many tokens want logits (the rows {@link ModelRunner#forward} returns). */
    public int logitsCount() { return logitsTokenIndex.length; }

    /** The batch index of the token whose logits are row {@code row}. */
    public int logitsTokenIndex(int row) { return logitsTokenIndex[row]; }

    /** Number of distinct sequences. */
    public int sequenceCount() { return distinctSequences.length; }

    /** The j-th distinct sequence id, in order of first appearance. */
    public int sequence(int j) { return distinctSequences[j]; }

    /** The first position of the j-th distinct sequence in this batch. */
    public int firstPosition(int j) { return firstPositions[j]; }

    /** The last position of the j-th distinct sequence in this batch. */
    public int lastPosition(int j) { return lastPositions[j]; }

    /** Tokens of the j-th distinct sequence in this batch (its positions are consecutive). */
    public int sequenceTokens(int j) { return lastPositions[j] - firstPositions[j] + 1; }

    /** The index j (for {@link #sequence(int)} etc.) of token {@code i}'s sequence. */
    public int sequenceIndex(int i) { return sequenceIndex[i]; }

    /** Whether the batch says where each position's keys and values live (block tables), for runs on bare KV storage. */
    public boolean hasBlockTables() { return blockTables != null; }

    /** Slots per block of the block tables; 0 without them. */
    public int blockSize() { return blockSize; }

    /** Blocks in the table of the j-th distinct sequence. */
    public int blockTableLength(int j) { return tables()[j].length; }

    /** Physical block of logical block {@code i} of the j-th distinct sequence. */
    public int block(int j, int i) { return tables()[j][i]; }

    /** The slot of position {@code pos} of the j-th distinct sequence (any position its table covers, not only this batch's). */
    public long slot(int j, int pos) {
        return (long) tables()[j][pos / blockSize] * blockSize + pos % blockSize;
    }

    /** The slot token {@code i}'s key and value are written to (vLLM's {@code slot_mapping}). */
    public long slot(int i) {
        tables();
        return slotMapping[i];
    }

    private int[][] tables() {
        if (blockTables == null) throw new IllegalStateException("this batch has no block tables");
        return blockTables;
    }

    /** The largest sequence id in the batch. */
    public int maxSequenceId() {
        int m = 0;
        for (int s : distinctSequences) m = Math.max(m, s);
        return m;
    }

    /**
     * A prompt (or a chunk of one) of sequence {@code seq} at positions {@code startPos ...}; logits
     * for every token when {@code allLogits} (perplexity), else only for the last (generation).
     */
    public static Batch ofSequence(int seq, int startPos, int[] tokens, boolean allLogits) {
        return builder(tokens.length).addSequence(seq, startPos, tokens, 0, tokens.length, allLogits).build();
    }

    /** One decode step: token {@code tokens[i]} of sequence {@code seqIds[i]} at {@code positions[i]}, logits for each. */
    public static Batch decodeStep(int[] seqIds, int[] tokens, int[] positions) {
        if (seqIds.length != tokens.length || tokens.length != positions.length) {
            throw new IllegalArgumentException("decode step arrays differ in length: " + seqIds.length + " sequences, "
                    + tokens.length + " tokens, " + positions.length + " positions");
        }
        Builder b = builder(tokens.length);
        for (int i = 0; i < tokens.length; i++) b.add(tokens[i], positions[i], seqIds[i], true);
        return b.build();
    }

    public static Builder builder() { return new Builder(16); }

    public static Builder builder(int expectedTokens) { return new Builder(Math.max(1, expectedTokens)); }

    @Override public String toString() {
        return "Batch[" + size() + " tokens, " + sequenceCount() + " sequences, " + logitsCount() + " logits rows]";
    }

    /** Collects tokens; {@link #build()} validates and copies, so a builder can be reused after {@link #clear()}. */
    public static final class Builder {
        private int n;
        private int[] tokens, positions, seqIds;
        private boolean[] logits;
        private int blockSize, nTables;
        private int[] tableSeqs = new int[4];
        private int[][] tables = new int[4][];

        private Builder(int capacity) {
            tokens = new int[capacity];
            positions = new int[capacity];
            seqIds = new int[capacity];
            logits = new boolean[capacity];
        }

        /** Adds one token. */
        public Builder add(int token, int position, int sequenceId, boolean wantLogits) {
            if (n == tokens.length) {
                int cap = n * 2;
                tokens = Arrays.copyOf(tokens, cap);
                positions = Arrays.copyOf(positions, cap);
                seqIds = Arrays.copyOf(seqIds, cap);
                logits = Arrays.copyOf(logits, cap);
            }
            tokens[n] = token;
            positions[n] = position;
            seqIds[n] = sequenceId;
            logits[n] = wantLogits;
            n++;
            return this;
        }

        /**
         * Adds {@code ids[from..to)} of sequence {@code seq} at positions {@code startPos, startPos+1, ...};
         * logits for all of them when {@code allLogits}, else for the last one only.
         */
        public Builder addSequence(int seq, int startPos, int[] ids, int from, int to, boolean allLogits) {
            if (from < 0 || to > ids.length || from > to) {
                throw new IllegalArgumentException("token range [" + from + ", " + to + ") is outside an array of " + ids.length);
            }
            for (int i = from; i < to; i++) add(ids[i], startPos + (i - from), seq, allLogits || i == to - 1);
            return this;
        }

        /** Slots per block of the block tables (see {@link #blockTable}). */
        public Builder blockSize(int slots) {
            if (slots < 1) throw new IllegalArgumentException("block size (" + slots + ") must be >= 1");
            blockSize = slots;
            return this;
        }

        /**
         * Sequence {@code seq}'s physical blocks in logical order (copied at {@link #build()}); replaces
         * an earlier table of the same sequence. With block tables every sequence of the batch needs one.
         */
        public Builder blockTable(int seq, int[] blocks) {
            for (int t = 0; t < nTables; t++) {
                if (tableSeqs[t] == seq) {
                    tables[t] = blocks;
                    return this;
                }
            }
            if (nTables == tables.length) {
                tableSeqs = Arrays.copyOf(tableSeqs, 2 * nTables);
                tables = Arrays.copyOf(tables, 2 * nTables);
            }
            tableSeqs[nTables] = seq;
            tables[nTables++] = blocks;
            return this;
        }

        public int size() { return n; }

        /** Forgets the tokens and the block tables. */
        public Builder clear() {
            n = 0;
            nTables = 0;
            blockSize = 0;
            return this;
        }

        public Batch build() {
            int[][] copies = new int[nTables][];
            for (int t = 0; t < nTables; t++) copies[t] = tables[t].clone();
            return new Batch(n, tokens, positions, seqIds, logits, blockSize, tableSeqs, copies, nTables);
        }
    }
}
