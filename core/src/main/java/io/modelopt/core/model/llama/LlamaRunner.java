package io.modelopt.core.model.llama;

import io.modelopt.core.engine.ActivationObserver;
import io.modelopt.core.engine.Batch;
import io.modelopt.core.engine.BlockRunner;
import io.modelopt.core.engine.Linear;
import io.modelopt.core.engine.LinearInput;
import io.modelopt.core.engine.WeightSubstitution;
import io.modelopt.core.engine.Logits;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.kernel.AttentionKernel;
import io.modelopt.core.kernel.ComputePool;
import io.modelopt.core.kernel.KernelMode;
import io.modelopt.core.kernel.MatMul;
import io.modelopt.core.kernel.RmsNorm;
import io.modelopt.core.kernel.Rope;
import io.modelopt.core.kernel.SwiGlu;
import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.kv.ContiguousKvCache;
import io.modelopt.core.kv.KvCache;
import io.modelopt.core.kv.HostKvStorage;
import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.kv.KvLayout;
import io.modelopt.core.kv.KvStorage;
import io.modelopt.core.model.ModelConfig;
import io.modelopt.core.model.ModelSource;
import io.modelopt.core.model.RopeConvention;
import java.lang.foreign.Arena;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forward pass of the Llama family on the CPU (Llama 2/3, Mistral, Qwen2 with QKV biases,
 * grouped-query attention), one step for a whole {@link Batch}:
 * <pre>
 *   x = token_embd[token]                                   per token
 *   for each layer:
 *     xb = rmsnorm(x) · attn_norm
 *     q, k, v = Wq·xb (+bq), Wk·xb (+bk), Wv·xb (+bv)         one GEMM each for all batch tokens
 *     rope(q), rope(k) at each token's position; k, v → cache[layer][seq][pos]
 *     att = softmax(q·Kᵀ/√headDim over positions 0..pos of the token's sequence) · V
 *     x += Wo·att
 *     xb = rmsnorm(x) · ffn_norm
 *     x += Wdown·(silu(Wgate·xb) ⊙ Wup·xb)
 *   logits = Woutput · (rmsnorm(x) · output_norm)           only for tokens that want logits
 * </pre>
 * Every buffer is allocated once, for {@link RunnerOptions#maxBatchTokens()} tokens; the
 * parallel tasks are preallocated objects reading the step's state from fields, so a step
 * allocates nothing. Work is split over the one {@link ComputePool}: element-wise ops by token
 * rows, attention by (token, head) pairs, matrix products inside {@link MatMul}.
 *
 * <p>Attention reads the cache in one of two ways. A sequence with several tokens in the batch
 * (prefill, perplexity windows) has its cached keys and values copied to float arrays once per
 * layer, keys transposed, and every (token, head) of it attends over those
 * ({@link AttentionKernel#attendTransposed}, or four at a time with
 * {@link AttentionKernel#attendTransposed4}: the heads of a GQA group, or one head at four
 * positions); a sequence with one token (decode) reads the cache's entries in place
 * ({@link AttentionKernel#attend}, the heads that share a KV head together), through the cache's
 * slot mapping and entry offsets, so a paged cache works the same way. Both compute the same
 * function; they differ only in float rounding.
 *
 * <p>Element-wise arithmetic follows llama.cpp's CPU backend where it can (RoPE angles, the
 * RMSNorm scale, {@code expf} in softmax and SiLU, F16 rounding with an F16 cache; see the
 * kernels), because quantized models turn last-bit differences into whole quantization steps.
 */
public final class LlamaRunner implements ModelRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LlamaRunner.class);

    private final ModelConfig config;
    private final RunnerOptions options;
    /** System property: {@code false} reads Q4_0, Q8_0 and F16 weights in place instead of repacking them at load. */
    public static final String REPACK_PROPERTY = "modelopt.repack";

    private final LlamaWeights weights;
    /** Owns the repacked weight copies; null when nothing is repacked. */
    private final Arena packArena;
    private final ComputePool pool;
    private final boolean ownsPool;
    private final KernelMode mode;
    private final Rope rope;
    private final RopeConvention ropeConvention;
    private final int contextLength;
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
    // keys and values of the batch's multi-token sequences as floats, converted once per layer;
    // a sequence of `rows` positions starting at dense row r0 occupies [r0·kvDim, (r0+rows)·kvDim) of both:
    private final float[] denseKeys;    // keys transposed: (kvDim, rows) per sequence
    private final float[] denseValues;  // values: (rows, kvDim) per sequence
    private final float[][] rowScratch; // (threads, kvDim)
    private final float[][] attentionRows; // (threads, AttentionKernel.rowScratch(headDim)): cached entries as floats
    private final int densePositions;
    private int[] denseStart = new int[16];   // per batch sequence index: first row in denseKeys, or -1
    private int denseUsed;

    // the step in progress, read by the tasks
    private Batch batch;
    /** Where this step's keys and values live. */
    private KvStorage kv;
    /** The cache whose own mapping places them, or null when the batch's block tables do. */
    private KvCache cache;
    private int layer;
    /** The cache layer of {@link #layer}'s keys and values (0 in a block runner's one-layer scratch cache). */
    private int kvLayer;
    private float[] norm;
    /** Null in normal steps; a block runner call's choice of matrices. */
    private WeightSubstitution substitution;
    private ActivationObserver observer;
    private final Blocks blockRunner = new Blocks();

    private final ComputePool.RangeTask embedTask = this::embed;
    private final ComputePool.RangeTask ropeTask = this::ropeAngles;
    private final ComputePool.RangeTask attnNormTask = this::attentionNorm;
    private final ComputePool.RangeTask qkvTask = this::biasRopeStore;
    private final ComputePool.RangeTask denseTask = this::densify;
    private final ComputePool.RangeTask attentionTask = this::attention;
    private final ComputePool.RangeTask ffnNormTask = this::residualThenNorm;
    private final ComputePool.RangeTask swigluTask = this::swiglu;
    private final ComputePool.RangeTask residualTask = this::residual;
    private final ComputePool.RangeTask finalNormTask = this::finalNorm;

    private boolean closed;

    private LlamaRunner(ModelSource source, RunnerOptions options) {
        this.config = source.config();
        this.options = options;
        LlamaWeights bound = LlamaWeights.bind(source);
        this.mode = options.kernelMode();
        this.contextLength = options.effectiveContextLength(config.contextLength());
        this.hidden = config.hiddenSize();
        this.qDim = config.qDim();
        this.kvDim = config.kvDim();
        this.ffn = config.intermediateSize();
        this.vocab = config.vocabSize();
        this.headDim = config.headDim();
        this.numHeads = config.numHeads();
        this.groupSize = config.groupSize();
        this.half = headDim / 2;
        this.eps = config.rmsNormEps();
        this.attentionScale = 1.0f / (float) Math.sqrt(headDim);   // llama.cpp's 1.0f/sqrtf(float(n_embd_head))
        this.ropeConvention = config.ropeConvention();
        this.rope = new Rope(headDim, config.ropeTheta(), config.ropeScaling(), bound.ropeFreqFactors());

        int n = options.maxBatchTokens(), r = options.maxLogitsRows();
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
        this.ownsPool = options.computePool() == null;
        this.pool = ownsPool ? new ComputePool(options.threads()) : options.computePool();
        boolean four = AttentionKernel.canAttendFour(mode, headDim);
        this.blockHeads = four && groupSize % AttentionKernel.QUERIES == 0 ? AttentionKernel.QUERIES : 1;
        this.blockTokens = four && blockHeads == 1 ? AttentionKernel.QUERIES : 1;
        this.scores = new float[options.threads()][(four ? AttentionKernel.QUERIES : 1) * contextLength];
        this.quadQ = new int[options.threads()][AttentionKernel.QUERIES];
        this.quadN = new int[options.threads()][AttentionKernel.QUERIES];
        this.rowOffsets = new long[options.threads()][contextLength];
        this.densePositions = 2 * n;
        this.denseKeys = new float[Math.multiplyExact(densePositions, kvDim)];
        this.denseValues = new float[densePositions * kvDim];
        this.rowScratch = new float[options.threads()][kvDim];
        this.attentionRows = new float[options.threads()][AttentionKernel.rowScratch(headDim)];
        // the vector kernels' repacked Q4_0/Q8_0/F16 copies (-Dmodelopt.repack=false reads every weight in place)
        boolean repack = mode == KernelMode.VECTOR && Boolean.parseBoolean(System.getProperty(REPACK_PROPERTY, "true")) && bound.canRepack();
        this.packArena = repack ? Arena.ofShared() : null;
        try {
            long t0 = System.nanoTime();
            this.weights = repack ? bound.repacked(packArena, pool) : bound;
            if (repack) {
                LOG.info("repacked Q4_0/Q8_0/F16 weights: {} bytes in {} ms (the copied file pages released)", weights.repackedBytes(),
                        (System.nanoTime() - t0) / 1_000_000);
            }
        } catch (RuntimeException | Error e) {
            if (packArena != null) packArena.close();
            if (ownsPool) pool.close();
            throw e;
        }
        LOG.info("cpu runner: {} ({} kernels, {} threads, {} batch tokens, {} logits rows, context {}, KV {}{})",
                config.architecture(), mode, options.threads(), n, r, contextLength, options.kvDtype(), weights.tiedOutput() ? ", tied output" : "");
    }

    /** Binds {@code source}'s weights and allocates the buffers for {@code options}. */
    public static LlamaRunner load(ModelSource source, RunnerOptions options) {
        return new LlamaRunner(source, options);
    }

    @Override public ModelConfig config() { return config; }
    @Override public RunnerOptions options() { return options; }
    @Override public int contextLength() { return contextLength; }

    public LlamaWeights weights() { return weights; }

    @Override public KvCache newKvCache(int maxSequences, int maxPositions) {
        return new ContiguousKvCache(config.numLayers(), config.numKvHeads(), headDim, maxSequences, maxPositions, options.kvDtype());
    }

    @Override public Logits forward(Batch batch, KvCache cache) {
        if (closed) throw new IllegalStateException("runner is closed");
        if (batch.hasBlockTables()) {
            throw new IllegalArgumentException("a batch with block tables runs on bare KV storage (forward(Batch, KvStorage)); a KvCache places keys and values itself");
        }
        validate(batch, cache);
        this.cache = cache;
        run(batch, cache.storage());
        for (int j = 0; j < batch.sequenceCount(); j++) cache.setLength(batch.sequence(j), batch.lastPosition(j) + 1);
        return logits;
    }

    @Override public Logits forward(Batch batch, KvStorage storage) {
        if (closed) throw new IllegalStateException("runner is closed");
        validate(batch, storage);
        run(batch, storage);
        return logits;
    }

    @Override public KvStorage newKvStorage(int numBlocks, int blockSize) {
        return new HostKvStorage(KvLayout.of(config.numLayers(), config.numKvHeads(), headDim, numBlocks, blockSize, options.kvDtype()));
    }

    /** One step: embeddings, every block, the logits rows. */
    private void run(Batch batch, KvStorage storage) {
        this.batch = batch;
        this.kv = storage;
        try {
            planDense(batch);
            pool.parallelFor(batch.size(), embedTask);
            runBlocks(0, config.numLayers(), false);
            head();
        } finally {
            this.batch = null;
            this.kv = null;
            this.cache = null;
        }
    }

    /** The slot of position {@code pos} of the batch's j-th sequence: from the batch's block tables, or the cache's own mapping. */
    private long slot(int j, int pos) {
        return cache == null ? batch.slot(j, pos) : cache.slot(batch.sequence(j), pos);
    }

    /**
     * Decoder blocks {@code [from, to)} over the residual stream {@code x}; keys and values go to
     * {@link #cache} at the block's own layer, or at layer 0 of a one-layer scratch cache
     * ({@code scratchKv}, the block runner's).
     */
    private void runBlocks(int from, int to, boolean scratchKv) {
        int n = batch.size();
        for (int l = from; l < to; l++) {
            LlamaWeights.Layer w = weights.layer(l);
            layer = l;
            kvLayer = scratchKv ? 0 : l;
            norm = w.attnNorm();
            pool.parallelFor(n, attnNormTask);
            if (observer != null) observer.onInput(l, LinearInput.QKV, xb, n, hidden);
            MatMul.matmulSharedInput(pool, xb, n, weight(l, Linear.Q, w.wq()), q, weight(l, Linear.K, w.wk()), k, weight(l, Linear.V, w.wv()), v);
            pool.parallelFor(n, qkvTask);
            if (denseUsed > 0) pool.parallelFor(denseUsed, denseTask);
            // causal attention costs grow with the position: pieces of at most one token's heads,
            // latest (dearest) tokens first (attention() walks the items backwards), so the threads
            // finish together; a static split gave one thread three quarters of a prefill's attention
            int headBlocks = numHeads / blockHeads, items = (n + blockTokens - 1) / blockTokens * headBlocks;
            pool.parallelForDynamic(items, Math.max(1, Math.min(headBlocks, items / (4 * pool.threads()))), attentionTask);
            if (observer != null) observer.onInput(l, LinearInput.ATTN_OUTPUT, att, n, qDim);
            MatMul.matmul(pool, weight(l, Linear.ATTN_OUTPUT, w.wo()), att, n, xb);
            norm = w.ffnNorm();
            pool.parallelFor(n, ffnNormTask);
            if (observer != null) observer.onInput(l, LinearInput.GATE_UP, xb, n, hidden);
            MatMul.matmulSharedInput(pool, xb, n, weight(l, Linear.GATE, w.gate()), hb, weight(l, Linear.UP, w.up()), hb2, null, null);
            pool.parallelFor(n, swigluTask);
            if (observer != null) observer.onInput(l, LinearInput.DOWN, hb, n, ffn);
            MatMul.matmul(pool, weight(l, Linear.DOWN, w.down()), hb, n, xb);
            pool.parallelFor(n, residualTask);
        }
    }

    /** The final norm and the classifier for the batch's logits rows. */
    private void head() {
        int rows = batch.logitsCount();
        logits.reset(batch);
        if (rows > 0) {
            pool.parallelFor(rows, finalNormTask);
            if (observer != null) observer.onInput(config.numLayers(), LinearInput.OUTPUT, finalHidden, rows, hidden);
            MatMul.matmul(pool, weight(config.numLayers(), Linear.OUTPUT, weights.output()), finalHidden, rows, logitsBuffer);
        }
    }

    /** The matrix of {@code linear} in this step: the model's own unless a block-runner call substitutes it. */
    private WeightMatrix weight(int l, Linear linear, WeightMatrix own) {
        return substitution == null ? own : substitution.weight(l, linear, own);
    }

    @Override public void observe(ActivationObserver observer) { this.observer = observer; }

    @Override public BlockRunner blocks() { return blockRunner; }

    /** {@link BlockRunner} over this runner's buffers: hidden states in and out of {@code x}, keys and values in a scratch cache. */
    private final class Blocks implements BlockRunner {
        /** One layer's keys and values for the calibration batch; grown on demand, freed with the runner. */
        private ContiguousKvCache scratch;

        @Override public int numBlocks() { return config.numLayers(); }
        @Override public int hiddenSize() { return hidden; }

        @Override public void embed(Batch b, float[] out) {
            begin(b, out, null);
            try {
                pool.parallelFor(b.size(), embedTask);
                System.arraycopy(x, 0, out, 0, b.size() * hidden);
            } finally {
                end();
            }
        }

        @Override public void forward(int from, int to, Batch b, float[] in, float[] out, WeightSubstitution weights) {
            if (from < 0 || to > config.numLayers() || from > to) {
                throw new IllegalArgumentException("blocks [" + from + ", " + to + ") outside the model's " + config.numLayers() + " blocks");
            }
            begin(b, in, out);
            try {
                int n = b.size();
                System.arraycopy(in, 0, x, 0, n * hidden);
                if (from < to) {
                    cache = scratchFor(b);
                    kv = cache.storage();
                    substitution = weights;
                    planDense(b);
                    // the RoPE angles of each token's position (embed computes them in a full forward)
                    pool.parallelFor(n, ropeTask);
                    runBlocks(from, to, true);
                }
                System.arraycopy(x, 0, out, 0, n * hidden);
            } finally {
                end();
            }
        }

        @Override public Logits logits(Batch b, float[] in, WeightSubstitution weights) {
            if (b.logitsCount() > options.maxLogitsRows()) {
                throw new IllegalArgumentException("batch asks for " + b.logitsCount() + " logits rows, more than maxLogitsRows " + options.maxLogitsRows());
            }
            begin(b, in, null);
            try {
                System.arraycopy(in, 0, x, 0, b.size() * hidden);
                substitution = weights;
                head();
                return logits;
            } finally {
                end();
            }
        }

        private void begin(Batch b, float[] in, float[] out) {
            if (closed) throw new IllegalStateException("runner is closed");
            if (b.size() > options.maxBatchTokens()) {
                throw new IllegalArgumentException("batch of " + b.size() + " tokens exceeds maxBatchTokens " + options.maxBatchTokens());
            }
            long need = (long) b.size() * hidden;
            if (in.length < need || (out != null && out.length < need)) {
                throw new IllegalArgumentException("hidden states of " + b.size() + " tokens need " + need + " floats; got arrays of "
                        + in.length + (out != null ? " and " + out.length : ""));
            }
            for (int i = 0; i < b.size(); i++) {
                if (b.token(i) >= vocab) throw new IllegalArgumentException("batch token " + i + ": token id " + b.token(i) + " is outside the vocabulary of " + vocab);
                if (b.position(i) >= contextLength) {
                    throw new IllegalArgumentException("batch token " + i + ": position " + b.position(i) + " is beyond the context length " + contextLength);
                }
            }
            for (int j = 0; j < b.sequenceCount(); j++) {
                if (b.firstPosition(j) != 0) {
                    throw new IllegalArgumentException("sequence " + b.sequence(j) + " starts at position " + b.firstPosition(j)
                            + "; a block runner's sequences start at 0 (they attend only within the batch)");
                }
            }
            batch = b;
        }

        private void end() {
            batch = null;
            cache = null;
            kv = null;
            substitution = null;
        }

        /** A one-layer cache with room for the batch's sequence ids and positions. */
        private ContiguousKvCache scratchFor(Batch b) {
            int seqs = b.maxSequenceId() + 1, positions = 1;
            for (int j = 0; j < b.sequenceCount(); j++) positions = Math.max(positions, b.lastPosition(j) + 1);
            if (scratch == null || scratch.maxSequences() < seqs || scratch.maxPositions() < positions) {
                if (scratch != null) scratch.close();
                scratch = null;
                scratch = new ContiguousKvCache(1, config.numKvHeads(), headDim, seqs, positions, options.kvDtype());
            }
            return scratch;
        }

        void close() {
            if (scratch != null) scratch.close();
        }
    }

    private void validate(Batch b, KvCache c) {
        validateShape(b, c.numLayers(), c.numKvHeads(), c.headDim());
        for (int i = 0; i < b.size(); i++) {
            int seq = b.sequenceId(i);
            if (seq >= c.maxSequences()) {
                throw new IllegalArgumentException("batch token " + i + ": sequence id " + seq + " is outside the KV cache's " + c.maxSequences() + " sequences");
            }
        }
        for (int j = 0; j < b.sequenceCount(); j++) {
            int seq = b.sequence(j), first = b.firstPosition(j), last = b.lastPosition(j);
            int have = c.length(seq);
            if (first > have) {
                throw new IllegalArgumentException("sequence " + seq + ": batch starts at position " + first + " but the KV cache holds only "
                        + have + " positions (positions " + have + ".." + (first - 1) + " were never computed)");
            }
            if (last >= c.capacity(seq)) {
                throw new IllegalArgumentException("sequence " + seq + ": position " + last + " is beyond the KV cache's capacity of " + c.capacity(seq) + " positions");
            }
        }
    }

    private void validate(Batch b, KvStorage s) {
        KvLayout l = s.layout();
        validateShape(b, l.numLayers(), l.numKvHeads(), l.headDim());
        if (!b.hasBlockTables()) {
            throw new IllegalArgumentException("a batch on bare KV storage needs block tables (Batch.Builder.blockSize and blockTable): the storage does not know where a sequence lives");
        }
        for (int j = 0; j < b.sequenceCount(); j++) {
            for (int i = 0, used = b.lastPosition(j) / b.blockSize(); i <= used; i++) {
                int block = b.block(j, i);
                if (block >= l.numBlocks()) {
                    throw new IllegalArgumentException("sequence " + b.sequence(j) + ": block table entry " + i + " is block " + block
                            + ", outside the KV storage's " + l.numBlocks() + " blocks");
                }
            }
        }
    }

    /** The batch against the runner's limits and the model; the KV shape against the model. */
    private void validateShape(Batch b, int kvLayers, int kvHeads, int kvHeadDim) {
        if (b.size() > options.maxBatchTokens()) {
            throw new IllegalArgumentException("batch of " + b.size() + " tokens exceeds maxBatchTokens " + options.maxBatchTokens());
        }
        if (b.logitsCount() > options.maxLogitsRows()) {
            throw new IllegalArgumentException("batch asks for " + b.logitsCount() + " logits rows, more than maxLogitsRows " + options.maxLogitsRows());
        }
        if (kvLayers != config.numLayers() || kvHeads != config.numKvHeads() || kvHeadDim != headDim) {
            throw new IllegalArgumentException("KV cache of " + kvLayers + " layers x " + kvHeads + " KV heads x " + kvHeadDim
                    + " does not fit this model (" + config.numLayers() + " layers x " + config.numKvHeads() + " KV heads x " + headDim + ")");
        }
        for (int i = 0; i < b.size(); i++) {
            int tok = b.token(i), pos = b.position(i), seq = b.sequenceId(i);
            if (tok >= vocab) throw new IllegalArgumentException("batch token " + i + ": token id " + tok + " is outside the vocabulary of " + vocab);
            if (pos >= contextLength) {
                throw new IllegalArgumentException("batch token " + i + " (sequence " + seq + "): position " + pos
                        + " is beyond the context length " + contextLength + " (positions 0.." + (contextLength - 1) + ")");
            }
        }
    }

    /**
     * Chooses the sequences whose cached keys/values are converted to float once per layer
     * ({@link #densify}): those with at least two tokens in the batch (each cached row is then read
     * by several tokens), as long as their positions fit the dense buffers (2 × maxBatchTokens
     * rows). The others, e.g. the single tokens of a decode step, read the cache directly.
     */
    private void planDense(Batch b) {
        int seqs = b.sequenceCount();
        if (denseStart.length < seqs) denseStart = new int[Math.max(seqs, 2 * denseStart.length)];
        int used = 0;
        for (int j = 0; j < seqs; j++) {
            int rows = b.lastPosition(j) + 1;
            if (b.sequenceTokens(j) >= 2 && used + rows <= densePositions) {
                denseStart[j] = used;
                used += rows;
            } else {
                denseStart[j] = -1;
            }
        }
        denseUsed = used;
    }

    // ---- the parallel pieces of a step, in order ----

    /** x[t] = embedding of token t; the RoPE angles of its position. */
    private void embed(int start, int end, int worker) {
        WeightMatrix e = weights.tokenEmbedding();
        for (int t = start; t < end; t++) {
            e.dequantizeRow(batch.token(t), x, t * hidden);
            rope.cosSin(batch.position(t), ropeCos, ropeSin, t * half);
        }
    }

    /** The RoPE angles of token t's position (a block runner's step starts from hidden states, not embeddings). */
    private void ropeAngles(int start, int end, int worker) {
        for (int t = start; t < end; t++) rope.cosSin(batch.position(t), ropeCos, ropeSin, t * half);
    }

    private void attentionNorm(int start, int end, int worker) {
        for (int t = start; t < end; t++) RmsNorm.apply(mode, x, t * hidden, norm, eps, xb, t * hidden, hidden);
    }

    /** Biases (Qwen2), RoPE on q and k, then k and v into the cache at (sequence, position). */
    private void biasRopeStore(int start, int end, int worker) {
        LlamaWeights.Layer w = weights.layer(layer);
        for (int t = start; t < end; t++) {
            if (w.bq() != null) {
                addBias(q, t * qDim, w.bq());
                addBias(k, t * kvDim, w.bk());
                addBias(v, t * kvDim, w.bv());
            }
            Rope.rotate(ropeConvention, q, t * qDim, numHeads, headDim, ropeCos, ropeSin, t * half);
            // llama.cpp multiplies an F16 cache's keys with the query rounded to F16 (see AttentionKernel)
            if (kv.layout().dtype() == KvDtype.F16) AttentionKernel.roundToF16(q, t * qDim, qDim);
            Rope.rotate(ropeConvention, k, t * kvDim, config.numKvHeads(), headDim, ropeCos, ropeSin, t * half);
            int seq = batch.sequenceId(t), pos = batch.position(t);
            long slot = cache == null ? batch.slot(t) : cache.slot(seq, pos);
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
            int seq = batch.sequence(j), pos = r - denseStart[j], rows = batch.lastPosition(j) + 1;
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
     * its own. The slot offsets of a token's positions are looked up once per token in a range.
     */
    private void attention(int start, int end, int worker) {
        float[] sc = scores[worker];
        long[] offs = rowOffsets[worker];
        int size = batch.size(), headBlocks = numHeads / blockHeads;
        int currentToken = -1, n = 0, last = (size + blockTokens - 1) / blockTokens * headBlocks - 1;
        for (int item = start; item < end; item++) {
            int i = last - item;
            int t0 = i / headBlocks * blockTokens, h0 = i % headBlocks * blockHeads;
            if (blockTokens * blockHeads == AttentionKernel.QUERIES && attendFour(t0, h0, worker)) continue;
            for (int t = t0; t < Math.min(size, t0 + blockTokens); t++) {
                int j = batch.sequenceIndex(t), dense = denseStart[j];
                if (dense < 0) {
                    // read the cache in place: the block's heads share one KV head, converted once for all of them
                    if (t != currentToken) {
                        currentToken = t;
                        n = batch.position(t) + 1;
                        KvLayout layout = kv.layout();
                        for (int p = 0; p < n; p++) offs[p] = layout.entryOffset(slot(j, p));
                    }
                    long headOffset = h0 / groupSize * kv.layout().headStride();
                    int o = t * qDim + h0 * headDim;
                    AttentionKernel.attend(mode, q, o, blockHeads, headDim, attentionScale, kv.keys(kvLayer), kv.values(kvLayer),
                            kv.layout().dtype().ggmlType(), offs, headOffset, n, sc, contextLength, attentionRows[worker], att, o);
                    continue;
                }
                for (int h = h0; h < h0 + blockHeads; h++) {
                    int out = t * qDim + h * headDim, rows = batch.lastPosition(j) + 1, kvh = h / groupSize;
                    AttentionKernel.attendTransposed(mode, q, out, headDim, attentionScale,
                            denseKeys, dense * kvDim + kvh * headDim * rows, rows,
                            denseValues, dense * kvDim + kvh * headDim, kvDim, batch.position(t) + 1, kv.layout().dtype() == KvDtype.F16, sc, att, out);
                }
            }
        }
    }

    /**
     * The block at token {@code t0}, head {@code h0} with the four-query kernel, if its four pairs
     * read the same dense keys and values (same sequence, densified; the heads of a block always
     * share a KV head); false otherwise (then the caller does them one by one).
     */
    private boolean attendFour(int t0, int h0, int worker) {
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
                denseValues, dense * kvDim + kvh * headDim, kvDim, ns, kv.layout().dtype() == KvDtype.F16, sc, sc.length / AttentionKernel.QUERIES, att, qo);
        return true;
    }

    /** x += Wo·att (in xb); xb = rmsnorm(x) · ffn_norm. */
    private void residualThenNorm(int start, int end, int worker) {
        for (int t = start; t < end; t++) {
            int off = t * hidden;
            for (int i = 0; i < hidden; i++) x[off + i] += xb[off + i];
            RmsNorm.apply(mode, x, off, norm, eps, xb, off, hidden);
        }
    }

    private void swiglu(int start, int end, int worker) {
        for (int t = start; t < end; t++) SwiGlu.apply(mode, hb, t * ffn, hb2, t * ffn, ffn);
    }

    /** x += Wdown·h (in xb). */
    private void residual(int start, int end, int worker) {
        for (int i = start * hidden, e = end * hidden; i < e; i++) x[i] += xb[i];
    }

    /** Row r of finalHidden = rmsnorm(x[token of logits row r]) · output_norm. */
    private void finalNorm(int start, int end, int worker) {
        for (int r = start; r < end; r++) {
            RmsNorm.apply(mode, x, batch.logitsTokenIndex(r) * hidden, weights.outputNorm(), eps, finalHidden, r * hidden, hidden);
        }
    }

    @Override public void close() {
        if (!closed) {
            closed = true;
            blockRunner.close();
            if (ownsPool) pool.close();
            if (packArena != null) packArena.close();
        }
    }

    @Override public String toString() {
        return "LlamaRunner[" + config.architecture() + ", " + config.numLayers() + " layers, context " + contextLength + "]";
    }
}
