package io.modelopt.core.gguf;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.tensor.TensorData;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A GGUF file (versions 2 and 3, little-endian), opened read-only: its metadata with the GGUF type
 * of every value, its tensor infos, and its tensor data mapped zero-copy.
 *
 * <p>The whole header is parsed and validated in {@link #open(Path)} (see {@link GgufHeaderParser});
 * a malformed, truncated or unsupported file fails there with a {@link ModelFormatException} that
 * names the file, the byte offset and the problem. The data section is mapped once, with a shared
 * arena owned by this object; every {@link TensorData} is a slice of that mapping and becomes
 * invalid when this file is {@linkplain #close() closed}.
 *
 * <p>Thread-safe after opening: all state is immutable until {@link #close()}.
 */
public final class GgufFile implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GgufFile.class);

    private final Path path;
    private final GgufHeaderParser.Header header;
    private final Arena arena;
    private final MemorySegment data;
    private final Map<String, GgufTensorInfo> infos;
    private final Map<String, TensorData> tensors;

    private GgufFile(Path path, GgufHeaderParser.Header header, Arena arena, MemorySegment data) {
        this.path = path;
        this.header = header;
        this.arena = arena;
        this.data = data;
        Map<String, GgufTensorInfo> byName = new LinkedHashMap<>();
        Map<String, TensorData> views = new LinkedHashMap<>();
        for (GgufTensorInfo t : header.tensors()) {
            byName.put(t.name(), t);
            views.put(t.name(), new TensorData(t.name(), t.type(), t.dims(), data.asSlice(t.offset(), t.byteSize())));
        }
        this.infos = Collections.unmodifiableMap(byName);
        this.tensors = Collections.unmodifiableMap(views);
    }

    /**
     * Opens and validates {@code path} and maps its tensor data.
     *
     * @throws ModelFormatException the file is not a valid GGUF v2/v3 little-endian file
     * @throws UncheckedIOException the file cannot be read
     */
    public static GgufFile open(Path path) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            GgufHeaderParser.Header h = GgufHeaderParser.parse(path, ch);
            Arena arena = Arena.ofShared();
            try {
                long dataSize = h.tensors().isEmpty() ? 0 : h.fileSize() - h.dataOffset();
                MemorySegment data = dataSize == 0 ? MemorySegment.ofArray(new byte[0])
                        : ch.map(FileChannel.MapMode.READ_ONLY, h.dataOffset(), dataSize, arena);
                GgufFile f = new GgufFile(path, h, arena, data);
                LOG.debug("opened {}: GGUF v{}, {} metadata keys, {} tensors, data at {} ({} bytes), alignment {}",
                        path, h.version(), h.metadata().size(), h.tensors().size(), h.dataOffset(), dataSize, h.alignment());
                return f;
            } catch (RuntimeException | IOException e) {
                arena.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read GGUF file " + path, e);
        }
    }

    public Path path() { return path; }

    /** 2 or 3. */
    public int version() { return header.version(); }

    /** {@code general.alignment}, or 32. */
    public int alignment() { return header.alignment(); }

    /** Absolute file offset where the data section (tensor offset 0) starts. */
    public long dataOffset() { return header.dataOffset(); }

    public long fileSize() { return header.fileSize(); }

    // ---- metadata -------------------------------------------------------------------------

    /** All metadata in file order, with GGUF types. */
    public Map<String, GgufValue> metadata() { return header.metadata(); }

    public boolean contains(String key) { return header.metadata().containsKey(key); }

    public Optional<GgufValue> find(String key) { return Optional.ofNullable(header.metadata().get(key)); }

    /** The value of {@code key}; throws {@link ModelFormatException} naming the key when absent. */
    public GgufValue get(String key) {
        GgufValue v = header.metadata().get(key);
        if (v == null) throw new ModelFormatException(path, "missing metadata key '" + key + "'");
        return v;
    }

    public String getString(String key) { return asString(key, get(key)); }

    public Optional<String> findString(String key) { return find(key).map(v -> asString(key, v)); }

    /** Any integer type whose value fits an {@code int}. */
    public int getInt(String key) { return asInt(key, get(key)); }

    public Optional<Integer> findInt(String key) { return find(key).map(v -> asInt(key, v)); }

    /** Any integer type whose value fits a {@code long}. */
    public long getLong(String key) { return asLong(key, get(key)); }

    public Optional<Long> findLong(String key) { return find(key).map(v -> asLong(key, v)); }

    /** FLOAT32, FLOAT64 (narrowed) or an integer type. */
    public float getFloat(String key) { return (float) asDouble(key, get(key)); }

    public Optional<Float> findFloat(String key) { return find(key).map(v -> (float) asDouble(key, v)); }

    /** FLOAT32, FLOAT64 or an integer type. */
    public double getDouble(String key) { return asDouble(key, get(key)); }

    public Optional<Double> findDouble(String key) { return find(key).map(v -> asDouble(key, v)); }

    public boolean getBoolean(String key) { return asBoolean(key, get(key)); }

    public Optional<Boolean> findBoolean(String key) { return find(key).map(v -> asBoolean(key, v)); }

    public GgufValue.Array getArray(String key) { return asArray(key, get(key)); }

    public Optional<GgufValue.Array> findArray(String key) { return find(key).map(v -> asArray(key, v)); }

    /** An array of STRING. */
    public List<String> getStringList(String key) { return stringList(key, get(key)); }

    public Optional<List<String>> findStringList(String key) { return find(key).map(v -> stringList(key, v)); }

    /** An array of FLOAT32, FLOAT64 or integers, as floats. */
    public float[] getFloatArray(String key) { return floatArray(key, get(key)); }

    public Optional<float[]> findFloatArray(String key) { return find(key).map(v -> floatArray(key, v)); }

    /** An array of any integer type whose values fit an {@code int}. */
    public int[] getIntArray(String key) { return intArray(key, get(key)); }

    public Optional<int[]> findIntArray(String key) { return find(key).map(v -> intArray(key, v)); }

    // ---- tensors --------------------------------------------------------------------------

    /** Tensor infos in file order. */
    public List<GgufTensorInfo> tensorInfos() { return header.tensors(); }

    public Optional<GgufTensorInfo> tensorInfo(String name) { return Optional.ofNullable(infos.get(name)); }

    /** Name → zero-copy tensor view, in file order. Valid until {@link #close()}. */
    public Map<String, TensorData> tensors() {
        checkOpen();
        return tensors;
    }

    public Optional<TensorData> findTensor(String name) {
        checkOpen();
        return Optional.ofNullable(tensors.get(name));
    }

    public TensorData tensor(String name) {
        return findTensor(name).orElseThrow(() -> new ModelFormatException(path, "missing tensor '" + name + "'"));
    }

    public boolean isOpen() { return arena.scope().isAlive(); }

    /** Unmaps the tensor data; every {@link TensorData} of this file becomes unusable. Idempotent. */
    @Override public synchronized void close() {
        if (arena.scope().isAlive()) arena.close();
    }

    @Override public String toString() {
        return "GgufFile[" + path + " v" + version() + ", " + metadata().size() + " keys, " + header.tensors().size() + " tensors]";
    }

    private void checkOpen() {
        if (!arena.scope().isAlive()) throw new IllegalStateException("GGUF file " + path + " is closed");
    }

    // ---- conversions ----------------------------------------------------------------------

    private ModelFormatException wrongType(String key, GgufValue v, String expected) {
        Long at = header.keyOffsets().get(key);
        String actual = v instanceof GgufValue.Array a ? "an array of " + a.elementType() : v.type().toString();
        return new ModelFormatException(path, at == null ? -1 : at, "metadata key '" + key + "' is " + actual + ", expected " + expected);
    }

    private ModelFormatException outOfRange(String key, String value, String target) {
        Long at = header.keyOffsets().get(key);
        return new ModelFormatException(path, at == null ? -1 : at, "metadata key '" + key + "' value " + value + " does not fit " + target);
    }

    private String asString(String key, GgufValue v) {
        if (v instanceof GgufValue.Str s) return s.value();
        throw wrongType(key, v, "STRING");
    }

    private long asLong(String key, GgufValue v) {
        if (!(v instanceof GgufValue.Int i)) throw wrongType(key, v, "an integer");
        if (i.exceedsLong()) throw outOfRange(key, Long.toUnsignedString(i.value()), "a signed 64-bit integer");
        return i.value();
    }

    private int asInt(String key, GgufValue v) {
        long x = asLong(key, v);
        if (x != (int) x) throw outOfRange(key, Long.toString(x), "a 32-bit integer");
        return (int) x;
    }

    private double asDouble(String key, GgufValue v) {
        return switch (v) {
            case GgufValue.Float32 f -> f.value();
            case GgufValue.Float64 f -> f.value();
            case GgufValue.Int i -> i.exceedsLong() ? Double.parseDouble(Long.toUnsignedString(i.value())) : (double) i.value();
            default -> throw wrongType(key, v, "a number");
        };
    }

    private boolean asBoolean(String key, GgufValue v) {
        if (v instanceof GgufValue.Bool b) return b.value();
        throw wrongType(key, v, "BOOL");
    }

    private GgufValue.Array asArray(String key, GgufValue v) {
        if (v instanceof GgufValue.Array a) return a;
        throw wrongType(key, v, "an array");
    }

    private List<String> stringList(String key, GgufValue v) {
        if (v instanceof GgufValue.Array a && a.elementType() == GgufType.STRING) return a.strings();
        throw wrongType(key, v, "an array of STRING");
    }

    private float[] floatArray(String key, GgufValue v) {
        if (v instanceof GgufValue.Array a) {
            switch (a.elementType()) {
                case FLOAT32 -> { return a.floats(); }
                case FLOAT64 -> {
                    double[] d = (double[]) a.rawData();
                    float[] out = new float[d.length];
                    for (int i = 0; i < d.length; i++) out[i] = (float) d[i];
                    return out;
                }
                default -> {
                    if (a.elementType().isInteger()) {
                        long[] l = (long[]) a.rawData();
                        float[] out = new float[l.length];
                        for (int i = 0; i < l.length; i++) out[i] = l[i];
                        return out;
                    }
                }
            }
        }
        throw wrongType(key, v, "an array of numbers");
    }

    private int[] intArray(String key, GgufValue v) {
        if (v instanceof GgufValue.Array a && a.elementType().isInteger()) {
            long[] l = (long[]) a.rawData();
            int[] out = new int[l.length];
            for (int i = 0; i < l.length; i++) {
                if (l[i] != (int) l[i]) throw outOfRange(key + "[" + i + "]", Long.toUnsignedString(l[i]), "a 32-bit integer");
                out[i] = (int) l[i];
            }
            return out;
        }
        throw wrongType(key, v, "an array of integers");
    }
}
