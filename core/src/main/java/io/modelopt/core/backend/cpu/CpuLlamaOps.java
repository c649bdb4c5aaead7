package io.modelopt.core.backend.cpu;

import io.modelopt.core.engine.ActivationObserver;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.kernel.AttentionKernel;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.RmsNorm;
import io.modelopt.core.kernel.SwiGlu;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.Rope;
import io.modelopt.core.model.RopeConvention;
import io.modelopt.core.model.llama.LlamaOps;

/**
 * The CPU execution of {@link LlamaOps}: the activation buffers, the per-worker scratch, and one
 * parallel task per operation over the {@link ComputePool}. Every buffer is allocated once, for
 * {@code maxBatchTokens} tokens; the tasks are preallocated objects reading the step's state from
 * fields, so a step allocates nothing. Work is split over the pool: element-wise operations by
 * token rows, attention by (token, head) pairs, matrix products inside {@link MatMul}.
 *
 * <p>Attention reads the KV storage in one of two ways. A sequence with several tokens in the
 * batch (prefill, perplexity windows) has its cached keys and values copied to float arrays once
 * per layer, keys transposed, and every (token, head) of it attends over those
 * ({@link AttentionKernel#attendTransposed}, or four at a time with
 * {@link AttentionKernel#attendTransposed4}: the heads of a GQA group, or one head at four
 * positions); a sequence with one token (decode) reads the storage's entries in place
 * ({@link AttentionKernel#attend}, the heads that share a KV head together), through the step's
 * slot mapping (the batch's block tables, or a {@link KvCache}'s own), so paged storage works the
 * same way. Both compute the same function; they differ only in float rounding.
 *
 * <p>Element-wise arithmetic follows llama.cpp's CPU backend where it can (RoPE angles, the
 * RMSNorm scale, {@code expf} in softmax and SiLU, F16 rounding with an F16 cache; see the
 * kernels), because quantized models turn last-bit differences into whole quantization steps.
 *
 * <p>A step is {@link #bind bound}, run by the graph, then {@link #unbind unbound}; one at a time.
 */
final class CpuLlamaOps implements LlamaOps {
    private final ComputePool pool;
    private final KernelMode mode;
    private final Rope rope;
    private final RopeConvention ropeConvention;
    private final int contextLength, numKvHeads;
    private final int hidden, qDim, kvDim, ffn, vocab, headDim, numHeads, groupSize, half;
    private final float eps, attentionScale;

    // activations, token-major: row t of a buffer starts at t × width
    private final float[] x;        // (maxTokens, hidden) residual stream
    private final float[] xb;       // (maxTokens, hidden) normed input / projection output
    private final float[] q;        // (maxTokens, qDim)
    private final float[] k;        // (maxTokens, kvDim)
    private final float[] v;        // (maxTokens, kvDim)
    private final float[] att;      // (maxTokens, qDim) attention output
    private final float[] hb;       // (maxTokens, ffn) gate, then silu(gate)·up
    private final float[] hb2;      // (maxTokens, ffn) up
    private final float[] ropeCos;  // (maxTokens, headDim/2)
    private final float[] ropeSin;  // (maxTokens, headDim/2)
    private final float[] finalHidden; // (maxLogitsRows, hidden)
    private final Logits logits;     // over (maxLogitsRows, vocab)
    private final float[] logitsBuffer;
    // per worker attention scratch
    private final float[][] scores;     // (threads, contextLength, or 4 × contextLength with attention over four queries)
    /**
     * Attention items: blocks of {@code blockTokens} tokens × {@code blockHeads} heads. With the
     * four-query kernel ({@link AttentionKernel#attendTransposed4}) a block is four heads of one
     * KV group (GQA with groups of 4, 8, …) or one head at four consecutive tokens; else one pair.
     */
    private final int blockTokens, blockHeads;
    private final int[][] quadQ, quadN; // (threads, 4) scratch of the four-query calls
    private final long[][] rowOffsets;  // (threads, contextLength)
    /** The token of the bound step whose entry offsets {@code rowOffsets[worker]} holds (-1: none); the same for every layer. */
    private final int[] offsetsToken;
    // keys and values of the batch's multi-token sequences as floats, converted once per layer;
    // a sequence of `rows` positions starting at dense row r0 occupies [r0·kvDim, (r0+rows)·kvDim) of both:
    private final float[] denseKeys;    // keys transposed: (kvDim, rows) per sequence
    private final float[] denseValues;  // values: (rows, kvDim) per sequence
    private final float[][] rowScratch; // (threads, kvDim)
    private final float[][] attentionRows; // (threads, AttentionKernel.rowScratch(headDim)): cached entries as floats
    private final int densePositions;
    private int[] denseStart = new int[16];   // per batch sequence index: first row in denseKeys, or -1
    private int denseUsed;
    private final long scratchBytes;

    // the step in progress, read by the tasks
    private Batch batch;
    /** Where this step's keys and values live; null in a step without attention (embeddings, logits only). */
    private KvStorage kv;
    /** The cache whose own mapping places them, or null when the batch's block tables do. */
    private KvCache cache;
    private int kvLayer;
    private float[] norm, bq, bk, bv;
    private WeightMatrix embeddingMatrix;
    private ActivationObserver observer;

    private final ComputePool.RangeTask embedTask = this::embedRows;
    private final ComputePool.RangeTask ropeTask = this::ropeRows;
    private final ComputePool.RangeTask normTask = this::normRows;
    private final ComputePool.RangeTask qkvTask = this::biasRopeStoreRows;
    private final ComputePool.RangeTask denseTask = this::densify;
    private final ComputePool.RangeTask attentionTask = this::attentionItems;
    private final ComputePool.RangeTask addThenNormTask = this::addThenNormRows;
    private final ComputePool.RangeTask swigluTask = this::swigluRows;
    private final ComputePool.RangeTask addTask = this::addRows;
    private final ComputePool.RangeTask finalNormTask = this::finalNormRows;

    /** Buffers for {@code maxTokens} batch tokens and {@code maxLogitsRows} logits rows of {@code config}'s model. */
    CpuLlamaOps(ModelConfig config, int maxTokens, int maxLogitsRows, int contextLength, KernelMode mode, ComputePool pool, float[] ropeFreqFactors) {
        this.pool = pool;
        this.mode = mode;
        this.contextLength = contextLength;
        this.hidden = config.hiddenSize();
        this.qDim = config.qDim();
        this.kvDim = config.kvDim();
        this.ffn = config.intermediateSize();
        this.vocab = config.vocabSize();
        this.headDim = config.headDim();
        this.numHeads = config.numHeads();
        this.numKvHeads = config.numKvHeads();
        this.groupSize = config.groupSize();
        this.half = headDim / 2;
        this.eps = config.rmsNormEps();
        this.attentionScale = 1.0f / (float) Math.sqrt(headDim);   // llama.cpp's 1.0f/sqrtf(float(n_embd_head))
        this.ropeConvention = config.ropeConvention();
        this.rope = new Rope(headDim, config.ropeTheta(), config.ropeScaling(), ropeFreqFactors);

        int n = maxTokens, r = maxLogitsRows, threads = pool.threads();
        try {
            x = new float[Math.multiplyExact(n, hidden)];
            xb = new float[n * hidden];
            q = new float[Math.multiplyExact(n, qDim)];
            k = new float[Math.multiplyExact(n, kvDim)];
            v = new float[n * kvDim];
            att = new float[n * qDim];
            hb = new float[Math.multiplyExact(n, ffn)];
            hb2 = new float[n * ffn];
            ropeCos = new float[n * half];
            ropeSin = new float[n * half];
            finalHidden = new float[r * hidden];
            logitsBuffer = new float[Math.multiplyExact(r, vocab)];
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("buffers for " + n + " batch tokens / " + r + " logits rows of this model exceed 2^31 floats; lower maxBatchTokens or maxLogitsRows", e);
        }
        this.logits = new Logits(logitsBuffer, vocab);
        boolean four = AttentionKernel.canAttendFour(mode, headDim);
        this.blockHeads = four && groupSize % AttentionKernel.QUERIES == 0 ? AttentionKernel.QUERIES : 1;
        this.blockTokens = four && blockHeads == 1 ? AttentionKernel.QUERIES : 1;
        this.scores = new float[threads][(four ? AttentionKernel.QUERIES : 1) * contextLength];
        this.quadQ = new int[threads][AttentionKernel.QUERIES];
        this.quadN = new int[threads][AttentionKernel.QUERIES];
        this.rowOffsets = new long[threads][contextLength];
        this.offsetsToken = new int[threads];
        this.densePositions = 2 * n;
        this.denseKeys = new float[Math.multiplyExact(densePositions, kvDim)];
        this.denseValues = new float[densePositions * kvDim];
        this.rowScratch = new float[threads][kvDim];
        this.attentionRows = new float[threads][AttentionKernel.rowScratch(headDim)];
        long floats = (long) x.length + xb.length + q.length + k.length + v.length + att.length + hb.length + hb2.length + ropeCos.length
                + ropeSin.length + finalHidden.length + logitsBuffer.length + denseKeys.length + denseValues.length
                + (long) threads * (scores[0].length + rowScratch[0].length + attentionRows[0].length);
        this.scratchBytes = 4 * floats + 8L * threads * contextLength + 8L * threads * AttentionKernel.QUERIES;
    }

    /** Bytes of the activation buffers and per-worker scratch (allocated once, at load). */
    long scratchBytes() { return scratchBytes; }

    void observer(ActivationObserver o) { this.observer = o; }

    /** The residual stream, {@code hidden} floats per token (a block runner copies hidden states in and out). */
    float[] residual() { return x; }

    /** The logits of the bound step, once the graph's head has run. */
    Logits logits() { return logits; }

    /**
     * Binds a step: its batch, its KV storage (null for a step without attention) and the cache whose
     * mapping places the keys and values (null when the batch's block tables do).
     */
    void bind(Batch b, KvStorage storage, KvCache mapping) {
        this.batch = b;
        this.kv = storage;
        this.cache = mapping;
        java.util.Arrays.fill(offsetsToken, -1); // the workers' entry offsets belong to the previous step
        planDense(b);
    }

    void unbind() {
        batch = null;
        kv = null;
        cache = null;
    }

    // ---- LlamaOps: one parallel pass each ----

    @Override public void embed(WeightMatrix embedding) {
        embeddingMatrix = embedding;
        pool.parallelFor(batch.size(), embedTask);
    }

    @Override public void ropeAngles() { pool.parallelFor(batch.size(), ropeTask); }

    @Override public void norm(float[] weight) {
        norm = weight;
        pool.parallelFor(batch.size(), normTask);
    }

    /**
     * Batch-invariant mode ({@link io.modelopt.core.engine.RunnerOptions#batchInvariant()}): every
     * token's products one row at a time through the single-row kernel, and attention read from the
     * KV storage for every token (no dense copy), so a row's reduction order never depends on the
     * other rows of the step.
     */
    void batchInvariant(boolean on) { this.batchInvariant = on; }

    private boolean batchInvariant;

    @Override public void matmul(Activation in, WeightMatrix w0, Activation out0, WeightMatrix w1, Activation out1, WeightMatrix w2, Activation out2) {
        int n = in == Activation.FINAL ? batch.logitsCount() : batch.size();
        if (n == 0) return;
        if (batchInvariant) {
            for (int t = 0; t < n; t++) {
                rowMatmul(w0, in, out0, t);
                if (w1 != null) rowMatmul(w1, in, out1, t);
                if (w2 != null) rowMatmul(w2, in, out2, t);
            }
            return;
        }
        if (w1 == null) {
            MatMul.matmul(pool, w0, buffer(in), n, buffer(out0));
        } else {
            MatMul.matmulSharedInput(pool, buffer(in), n, w0, buffer(out0), w1, buffer(out1), w2, w2 == null ? null : buffer(out2));
        }
    }

    private void rowMatmul(WeightMatrix w, Activation in, Activation out, int t) {
        MatMul.matmul(pool, w, buffer(in), t * w.cols(), w.cols(), 1, buffer(out), t * w.rows(), w.rows());
    }

    @Override public void biasRopeStore(float[] bq, float[] bk, float[] bv, int kvLayer) {
        this.bq = bq;
        this.bk = bk;
        this.bv = bv;
        this.kvLayer = kvLayer;
        pool.parallelFor(batch.size(), qkvTask);
    }

    @Override public void attention(int kvLayer) {
        this.kvLayer = kvLayer;
        int n = batch.size();
        if (denseUsed > 0) pool.parallelFor(denseUsed, denseTask);
        // causal attention costs grow with the position: pieces of at most one token's heads,
        // latest (dearest) tokens first (attentionItems() walks the items backwards), so the threads
        // finish together; a static split gave one thread three quarters of a prefill's attention
        int headBlocks = numHeads / blockHeads, items = (n + blockTokens - 1) / blockTokens * headBlocks;
        pool.parallelForDynamic(items, Math.max(1, Math.min(headBlocks, items / (4 * pool.threads()))), attentionTask);
    }

    @Override public void addThenNorm(float[] weight) {
        norm = weight;
        pool.parallelFor(batch.size(), addThenNormTask);
    }

    @Override public void swiglu() { pool.parallelFor(batch.size(), swigluTask); }

    @Override public void add() { pool.parallelFor(batch.size(), addTask); }

    @Override public void finalNorm(float[] weight) {
        logits.reset(batch);
        norm = weight;
        if (batch.logitsCount() > 0) pool.parallelFor(batch.logitsCount(), finalNormTask);
    }

    @Override public void observe(int layer, LinearInput input, Activation activation) {
        if (observer == null) return;
        int rows = activation == Activation.FINAL ? batch.logitsCount() : batch.size();
        if (rows > 0) observer.onInput(layer, input, buffer(activation), rows, width(activation));
    }

    private float[] buffer(Activation a) {
        return switch (a) {
            case X -> x;
            case XB -> xb;
            case Q -> q;
            case K -> k;
            case V -> v;
            case ATT -> att;
            case HB -> hb;
            case HB2 -> hb2;
            case FINAL -> finalHidden;
            case LOGITS -> logitsBuffer;
        };
    }

    private int width(Activation a) {
        return switch (a) {
            case X, XB, FINAL -> hidden;
            case Q, ATT -> qDim;
            case K, V -> kvDim;
            case HB, HB2 -> ffn;
            case LOGITS -> vocab;
        };
    }

    /**
     * Chooses the sequences whose cached keys/values are converted to float once per layer
     * ({@link #densify}): those with at least two tokens in the batch (each cached row is then read
     * by several tokens), as long as their positions fit the dense buffers (2 × maxBatchTokens
     * rows). The others, e.g. the single tokens of a decode step, read the storage directly.
     */
    private void planDense(Batch b) {
        int seqs = b.sequenceCount();
        if (denseStart.length < seqs) denseStart = new int[Math.max(seqs, 2 * denseStart.length)];
        int used = 0;
        for (int j = 0; j < seqs; j++) {
            int rows = b.lastPosition(j) + 1;
            if (!batchInvariant && b.sequenceTokens(j) >= 2 && used + rows <= densePositions) {
                denseStart[j] = used;
                used += rows;
            } else {
                denseStart[j] = -1;
            }
        }
        denseUsed = used;
    }

    /** The slot of position {@code pos} of the batch's j-th sequence: from the batch's block tables, or the cache's own mapping. */
    /** offs[p] = the entry offset of position p of the j-th sequence, p < n; block by block for a block table (no division per position). */
    private void entryOffsets(int j, int n, KvLayout layout, long[] offs) {
        if (cache != null) {
            for (int p = 0; p < n; p++) offs[p] = layout.entryOffset(slot(j, p));
            return;
        }
        int bs = batch.blockSize();
        long entry = layout.entryBytes();
        for (int b = 0, p = 0; p < n; b++) {
            long at = layout.entryOffset((long) batch.block(j, b) * bs);
            for (int end = Math.min(n, p + bs); p < end; p++, at += entry) offs[p] = at;
        }
    }

    private long slot(int j, int pos) {
        return cache == null ? batch.slot(j, pos) : cache.slot(batch.sequence(j), pos);
    }

    // ---- the parallel pieces ----

    /** x[t] = embedding of token t; the RoPE angles of its position. */
    private void embedRows(int start, int end, int worker) {
        WeightMatrix e = embeddingMatrix;
        for (int t = start; t < end; t++) {
            e.dequantizeRow(batch.token(t), x, t * hidden);
            rope.cosSin(batch.position(t), ropeCos, ropeSin, t * half);
        }
    }

    /** The RoPE angles of token t's position (a block runner's step starts from hidden states, not embeddings). */
    private void ropeRows(int start, int end, int worker) {
        for (int t = start; t < end; t++) rope.cosSin(batch.position(t), ropeCos, ropeSin, t * half);
    }

    private void normRows(int start, int end, int worker) {
        for (int t = start; t < end; t++) RmsNorm.apply(mode, x, t * hidden, norm, eps, xb, t * hidden, hidden);
    }

    /** Biases (Qwen2), RoPE on q and k, then k and v into the storage at the token's slot. */
    private void biasRopeStoreRows(int start, int end, int worker) {
        boolean f16 = kv.layout().dtype() == KvDtype.F16;
        for (int t = start; t < end; t++) {
            if (bq != null) {
                addBias(q, t * qDim, bq);
                addBias(k, t * kvDim, bk);
                addBias(v, t * kvDim, bv);
            }
            Rope.rotate(ropeConvention, q, t * qDim, numHeads, headDim, ropeCos, ropeSin, t * half);
            // llama.cpp multiplies an F16 cache's keys with the query rounded to F16 (see AttentionKernel)
            if (f16) AttentionKernel.roundToF16(q, t * qDim, qDim);
            Rope.rotate(ropeConvention, k, t * kvDim, numKvHeads, headDim, ropeCos, ropeSin, t * half);
            long slot = cache == null ? batch.slot(t) : cache.slot(batch.sequenceId(t), batch.position(t));
            kv.writeKey(kvLayer, slot, k, t * kvDim);
            kv.writeValue(kvLayer, slot, v, t * kvDim);
        }
    }

    private static void addBias(float[] a, int off, float[] bias) {
        for (int i = 0; i < bias.length; i++) a[off + i] += bias[i];
    }

    /** Dense rows {@code [start, end)}: row r of a planned sequence holds its cached position r - denseStart, as floats. */
    private void densify(int start, int end, int worker) {
        float[] row = rowScratch[worker];
        int j = 0;
        for (int r = start; r < end; r++) {
            while (j + 1 < batch.sequenceCount() && (denseStart[j] < 0 || r >= denseStart[j] + batch.lastPosition(j) + 1)) j++;
            int pos = r - denseStart[j], rows = batch.lastPosition(j) + 1;
            int block = denseStart[j] * kvDim;
            long slot = slot(j, pos);
            kv.readKey(kvLayer, slot, row, 0);
            for (int c = 0; c < kvDim; c++) denseKeys[block + c * rows + pos] = row[c];
            kv.readValue(kvLayer, slot, denseValues, r * kvDim);
        }
    }

    /**
     * Items are blocks of {@code blockTokens × blockHeads} (token, head) pairs, item {@code i} of
     * the range being block {@code last - i} (the latest tokens first). A block whose four pairs
     * attend over the same dense keys and values goes to the four-query kernel; any other pair on
     * its own. The slot offsets of a token's positions are looked up once per step and worker.
     */
    private void attentionItems(int start, int end, int worker) {
        float[] sc = scores[worker];
        long[] offs = rowOffsets[worker];
        KvLayout layout = kv.layout();
        boolean f16 = layout.dtype() == KvDtype.F16;
        int size = batch.size(), headBlocks = numHeads / blockHeads;
        int last = (size + blockTokens - 1) / blockTokens * headBlocks - 1;
        for (int item = start; item < end; item++) {
            int i = last - item;
            int t0 = i / headBlocks * blockTokens, h0 = i % headBlocks * blockHeads;
            if (blockTokens * blockHeads == AttentionKernel.QUERIES && attendFour(t0, h0, worker, f16)) continue;
            for (int t = t0; t < Math.min(size, t0 + blockTokens); t++) {
                int j = batch.sequenceIndex(t), dense = denseStart[j];
                if (dense < 0) {
                    // read the storage in place: the block's heads share one KV head, converted once for all of them
                    // the offsets of a token's positions serve all its heads and layers: computed once per step and worker
                    int n = batch.position(t) + 1;
                    if (offsetsToken[worker] != t) {
                        offsetsToken[worker] = t;
                        entryOffsets(j, n, layout, offs);
                    }
                    long headOffset = h0 / groupSize * layout.headStride();
                    int o = t * qDim + h0 * headDim;
                    AttentionKernel.attend(mode, q, o, blockHeads, headDim, attentionScale, kv, kvLayer,
                            offs, headOffset, n, sc, contextLength, attentionRows[worker], att, o);
                    continue;
                }
                for (int h = h0; h < h0 + blockHeads; h++) {
                    int out = t * qDim + h * headDim, rows = batch.lastPosition(j) + 1, kvh = h / groupSize;
                    AttentionKernel.attendTransposed(mode, q, out, headDim, attentionScale,
                            denseKeys, dense * kvDim + kvh * headDim * rows, rows,
                            denseValues, dense * kvDim + kvh * headDim, kvDim, batch.position(t) + 1, f16, sc, att, out);
                }
            }
        }
    }

    /**
     * The block at token {@code t0}, head {@code h0} with the four-query kernel, if its four pairs
     * read the same dense keys and values (same sequence, densified; the heads of a block always
     * share a KV head); false otherwise (then the caller does them one by one).
     */
    private boolean attendFour(int t0, int h0, int worker, boolean f16) {
        int tEnd = t0 + blockTokens - 1;
        if (tEnd >= batch.size()) return false;
        int j = batch.sequenceIndex(t0), dense = denseStart[j];
        if (dense < 0 || batch.sequenceIndex(tEnd) != j) return false;
        int[] qo = quadQ[worker], ns = quadN[worker];
        for (int k = 0; k < AttentionKernel.QUERIES; k++) {
            int t = t0 + (blockTokens == 1 ? 0 : k), h = h0 + (blockHeads == 1 ? 0 : k);
            qo[k] = t * qDim + h * headDim;
            ns[k] = batch.position(t) + 1;
        }
        int rows = batch.lastPosition(j) + 1, kvh = h0 / groupSize;
        float[] sc = scores[worker];
        AttentionKernel.attendTransposed4(q, qo, headDim, attentionScale,
                denseKeys, dense * kvDim + kvh * headDim * rows, rows,
                denseValues, dense * kvDim + kvh * headDim, kvDim, ns, f16, sc, sc.length / AttentionKernel.QUERIES, att, qo);
        return true;
    }

    /** x += Wo·att (in xb); xb = rmsnorm(x) · ffn_norm. */
    private void addThenNormRows(int start, int end, int worker) {
        for (int t = start; t < end; t++) {
            int off = t * hidden;
            for (int i = 0; i < hidden; i++) x[off + i] += xb[off + i];
            RmsNorm.apply(mode, x, off, norm, eps, xb, off, hidden);
        }
    }

    private void swigluRows(int start, int end, int worker) {
        for (int t = start; t < end; t++) SwiGlu.apply(mode, hb, t * ffn, hb2, t * ffn, ffn);
    }

    /** x += Wdown·h (in xb). */
    private void addRows(int start, int end, int worker) {
        for (int i = start * hidden, e = end * hidden; i < e; i++) x[i] += xb[i];
    }

    /** Row r of finalHidden = rmsnorm(x[token of logits row r]) · output_norm. */
    private void finalNormRows(int start, int end, int worker) {
        for (int r = start; r < end; r++) {
            RmsNorm.apply(mode, x, batch.logitsTokenIndex(r) * hidden, norm, eps, finalHidden, r * hidden, hidden);
        }
    }
}
