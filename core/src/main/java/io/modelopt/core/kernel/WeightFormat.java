package io.modelopt.core.kernel;

import io.modelopt.core.tensor.GgmlType;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Everything the engine knows about one weight format, in one object (as ggml's
 * {@code type_traits}): its name and geometry, its reference decoder (and, where the format has
 * one, its reference quantizer), its scalar and vector kernels, the form its kernels want the
 * activations in ({@link FormatKernel#activations()}), and an optional load-time repacked layout.
 * {@link WeightFormats} holds the table; a module outside core adds its formats there through a
 * {@link WeightFormatProvider}.
 *
 * <p>A weight of a format may be made of several tensors ({@link WeightMatrix#part}): an AWQ or
 * GPTQ linear carries packed quants, zero points and scales. The geometry describes the main
 * tensor's rows ({@link #rowBytes}); the decoder and kernels read the other parts themselves.
 *
 * <p>The vector kernel is given as a supplier and only asked for in {@link KernelMode#VECTOR}, so
 * a JVM without the Vector API never loads a vector class.
 */
public final class WeightFormat {
    /** Decodes whole rows to floats with the format's reference arithmetic. */
    @FunctionalInterface
    public interface RowDecoder {
        /** Row {@code row} of {@code w} into {@code dst[off .. off + w.cols())}. */
        void decode(WeightMatrix w, int row, float[] dst, int off);
    }

    /** Quantizes floats into the format's blocks (the reference quantizer). */
    @FunctionalInterface
    public interface RowQuantizer {
        /** {@code n} values of {@code src} from {@code off} (a whole number of blocks) into {@code dst} at {@code dstOff}. */
        void quantize(float[] src, int off, int n, java.lang.foreign.MemorySegment dst, long dstOff);
    }

    private final String name;
    private final GgmlType fileType;
    private final int blockSize, blockBytes;
    private final RowDecoder decoder;
    private final RowQuantizer quantizer;
    private final FormatKernel scalar;
    private final Supplier<FormatKernel> vector;
    private final Repacking repacking;
    private final Transcoding transcoding;
    private volatile FormatKernel vectorKernel;

    private WeightFormat(Builder b) {
        this.name = b.name;
        this.fileType = b.fileType;
        this.blockSize = b.blockSize;
        this.blockBytes = b.blockBytes;
        this.decoder = b.decoder;
        this.quantizer = b.quantizer;
        this.scalar = b.scalar;
        this.vector = b.vector;
        this.repacking = b.repacking;
        this.transcoding = b.transcoding;
    }

    /** The format's name, e.g. {@code Q4_0} or {@code INT4_G128_ASYM}; unique in {@link WeightFormats}. */
    public String name() { return name; }

    /** The GGUF/ggml type of the main tensor when this is a ggml format (a tensor of that type binds to it), else null. */
    public GgmlType fileType() { return fileType; }

    /** Weights per block of the main tensor (1 for plain types). */
    public int blockSize() { return blockSize; }

    /** Bytes per block of the main tensor. */
    public int blockBytes() { return blockBytes; }

    /** Bytes of one row of {@code cols} weights in the main tensor; {@code cols} must be a whole number of blocks. */
    public long rowBytes(long cols) {
        if (cols % blockSize != 0) {
            throw new IllegalArgumentException(name + ": a row of " + cols + " weights is not a whole number of " + blockSize + "-weight blocks");
        }
        return cols / blockSize * blockBytes;
    }

    /** Stored bits per weight of the main tensor (the other parts, e.g. AWQ's zero points, add to it). */
    public double bitsPerWeight() { return 8.0 * blockBytes / blockSize; }

    /** Row {@code row} decoded with the reference arithmetic (embedding lookups, the prefill GEMM's reference, tests). */
    public void decodeRow(WeightMatrix w, int row, float[] dst, int off) {
        decoder.decode(w, row, dst, off);
    }

    /** The reference quantizer, or null where the format has none here. */
    public RowQuantizer quantizer() { return quantizer; }

    /** The kernel of {@code mode}: the scalar one, or the Vector API one (created on first use). */
    public FormatKernel kernel(KernelMode mode) {
        if (mode == KernelMode.SCALAR) return scalar;
        FormatKernel k = vectorKernel;
        if (k == null) {
            k = Objects.requireNonNull(vector.get(), () -> name + ": the vector kernel supplier returned null");
            vectorKernel = k;
        }
        return k;
    }

    /** The load-time repacked layout, or null. */
    Repacking repacking() { return repacking; }

    /** How this format's rows are rewritten into a core format's interleaved layout at load, or null. */
    public Transcoding transcoding() { return transcoding; }

    @Override public String toString() { return name; }

    /** A format of {@code name}; every part but the repacked layout and the quantizer is required. */
    public static Builder builder(String name) { return new Builder(name); }

    /** Builds a {@link WeightFormat}. */
    public static final class Builder {
        private final String name;
        private GgmlType fileType;
        private int blockSize, blockBytes;
        private RowDecoder decoder;
        private RowQuantizer quantizer;
        private FormatKernel scalar;
        private Supplier<FormatKernel> vector;
        private Repacking repacking;
        private Transcoding transcoding;

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
            if (name.isBlank()) throw new IllegalArgumentException("a weight format needs a name");
        }

        /** A ggml type: its geometry comes with it. */
        public Builder fileType(GgmlType t) {
            this.fileType = t;
            return geometry(t.blockSize(), t.typeSize());
        }

        public Builder geometry(int blockSize, int blockBytes) {
            if (blockSize < 1 || blockBytes < 1) throw new IllegalArgumentException(name + ": block of " + blockSize + " weights in " + blockBytes + " bytes");
            this.blockSize = blockSize;
            this.blockBytes = blockBytes;
            return this;
        }

        public Builder decoder(RowDecoder d) { this.decoder = d; return this; }

        public Builder quantizer(RowQuantizer q) { this.quantizer = q; return this; }

        /** The scalar kernel, also used where no vector kernel exists. */
        public Builder scalar(FormatKernel k) { this.scalar = k; return this; }

        /** The vector kernel, asked for only in vector mode (defaults to the scalar one). */
        public Builder vector(Supplier<FormatKernel> k) { this.vector = k; return this; }

        Builder repacking(Repacking r) { this.repacking = r; return this; }

        /** Runs this format on a core format's interleaved kernels where shapes allow ({@link Transcoding}). */
        public Builder transcoding(Transcoding t) { this.transcoding = t; return this; }

        public WeightFormat build() {
            if (blockSize == 0) throw new IllegalStateException(name + ": no geometry (fileType or geometry)");
            Objects.requireNonNull(decoder, () -> name + ": no reference decoder");
            Objects.requireNonNull(scalar, () -> name + ": no scalar kernel");
            if (vector == null) {
                FormatKernel s = scalar;
                vector = () -> s;
            }
            return new WeightFormat(this);
        }
    }
}
