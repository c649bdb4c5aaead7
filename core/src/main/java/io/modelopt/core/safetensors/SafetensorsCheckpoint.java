package io.modelopt.core.safetensors;

import io.modelopt.core.ModelFormatException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One logical set of tensors stored as a single {@code model.safetensors} or as shards listed by
 * {@code model.safetensors.index.json}. Owns the opened files; {@link #close()} unmaps them all.
 *
 * <p>For a sharded checkpoint every shard named in the index must exist and hold every tensor the
 * index assigns to it; a tensor found in two shards is an error. Tensors a shard holds but the
 * index does not list are kept (transformers also loads every key of each shard) with a warning.
 * Tensor order: shards by file name, tensors in each shard's header order — so a checkpoint split
 * in order into {@code model-0000i-of-0000n} shards lists its tensors as the unsplit file did.
 */
public final class SafetensorsCheckpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SafetensorsCheckpoint.class);

    /** The single-file name transformers uses. */
    public static final String SINGLE_FILE = "model.safetensors";

    private final Path path;
    private final List<SafetensorsFile> files;
    private final Map<String, SafetensorsTensor> tensors;
    private final Map<String, SafetensorsFile> owner;
    private final Optional<SafetensorsIndex> index;

    private SafetensorsCheckpoint(Path path, List<SafetensorsFile> files, Map<String, SafetensorsTensor> tensors,
                                  Map<String, SafetensorsFile> owner, Optional<SafetensorsIndex> index) {
        this.path = path;
        this.files = List.copyOf(files);
        this.tensors = Collections.unmodifiableMap(tensors);
        this.owner = owner;
        this.index = index;
    }

    /**
     * Opens a checkpoint: a directory holding {@code model.safetensors} (preferred) or
     * {@code model.safetensors.index.json}; an index file; or a single {@code .safetensors} file.
     *
     * @throws ModelFormatException when the directory has neither file, a shard is missing or invalid
     */
    public static SafetensorsCheckpoint open(Path dirOrFile) {
        if (Files.isDirectory(dirOrFile)) {
            Path single = dirOrFile.resolve(SINGLE_FILE);
            if (Files.isRegularFile(single)) return single(single);
            Path idx = dirOrFile.resolve(SafetensorsIndex.FILE_NAME);
            if (Files.isRegularFile(idx)) return sharded(idx);
            throw new ModelFormatException(dirOrFile, "no " + SINGLE_FILE + " or " + SafetensorsIndex.FILE_NAME + " in this directory");
        }
        if (!Files.isRegularFile(dirOrFile)) throw new ModelFormatException(dirOrFile, "no such file or directory");
        if (dirOrFile.getFileName().toString().endsWith(".index.json")) return sharded(dirOrFile);
        return single(dirOrFile);
    }

    private static SafetensorsCheckpoint single(Path file) {
        SafetensorsFile f = SafetensorsFile.open(file);
        Map<String, SafetensorsFile> owner = new LinkedHashMap<>();
        for (String n : f.tensorNames()) owner.put(n, f);
        return new SafetensorsCheckpoint(file, List.of(f), new LinkedHashMap<>(f.tensors()), owner, Optional.empty());
    }

    private static SafetensorsCheckpoint sharded(Path indexFile) {
        SafetensorsIndex index = SafetensorsIndex.read(indexFile);
        Path dir = indexFile.toAbsolutePath().getParent();
        List<SafetensorsFile> opened = new ArrayList<>();
        try {
            Map<String, SafetensorsFile> byShard = new LinkedHashMap<>();
            for (String shard : new TreeSet<>(index.weightMap().values())) {
                Path p = dir.resolve(shard).normalize();
                if (!p.startsWith(dir.normalize())) {
                    throw new ModelFormatException(indexFile, "shard '" + shard + "' lies outside the checkpoint directory");
                }
                if (!Files.isRegularFile(p)) {
                    String example = index.weightMap().entrySet().stream().filter(e -> e.getValue().equals(shard)).findFirst().map(Map.Entry::getKey).orElse("?");
                    throw new ModelFormatException(indexFile, "shard file '" + shard + "' (holding e.g. tensor '" + example + "') is missing: expected at " + p);
                }
                SafetensorsFile f = SafetensorsFile.open(p);
                opened.add(f);
                byShard.put(shard, f);
            }
            Map<String, SafetensorsTensor> tensors = new LinkedHashMap<>();
            Map<String, SafetensorsFile> owner = new LinkedHashMap<>();
            for (SafetensorsFile f : opened) {
                for (SafetensorsTensor t : f.tensors().values()) {
                    SafetensorsFile prev = owner.putIfAbsent(t.name(), f);
                    if (prev != null) {
                        throw new ModelFormatException(indexFile, "tensor '" + t.name() + "' is stored in two shards: " + prev.path().getFileName() + " and " + f.path().getFileName());
                    }
                    tensors.put(t.name(), t);
                    if (!index.weightMap().containsKey(t.name())) log.warn("{}: tensor '{}' in shard {} is not listed in the index", indexFile, t.name(), f.path().getFileName());
                }
            }
            for (Map.Entry<String, String> e : index.weightMap().entrySet()) {
                SafetensorsFile f = byShard.get(e.getValue());
                if (f.find(e.getKey()).isEmpty()) {
                    SafetensorsFile actual = owner.get(e.getKey());
                    throw new ModelFormatException(indexFile, "the index places tensor '" + e.getKey() + "' in shard '" + e.getValue() + "', but that shard does not hold it"
                            + (actual == null ? " (no shard does)" : " (it is in " + actual.path().getFileName() + ")"));
                }
            }
            log.debug("opened sharded checkpoint {}: {} shards, {} tensors", indexFile, opened.size(), tensors.size());
            return new SafetensorsCheckpoint(indexFile, opened, tensors, owner, Optional.of(index));
        } catch (RuntimeException e) {
            opened.forEach(SafetensorsFile::close);
            throw e;
        }
    }

    /** The single file or the index file this checkpoint was opened from. */
    public Path path() { return path; }

    public boolean isSharded() { return index.isPresent(); }

    /** The index of a sharded checkpoint. */
    public Optional<SafetensorsIndex> index() { return index; }

    /** The opened files (one, or the shards in file-name order). */
    public List<SafetensorsFile> files() { return files; }

    /** Name → tensor over all files, unmodifiable. */
    public Map<String, SafetensorsTensor> tensors() { return tensors; }

    public List<String> tensorNames() { return new ArrayList<>(tensors.keySet()); }

    public Optional<SafetensorsTensor> find(String name) { return Optional.ofNullable(tensors.get(name)); }

    /** The file holding tensor {@code name}. */
    public Optional<Path> fileOf(String name) { return Optional.ofNullable(owner.get(name)).map(SafetensorsFile::path); }

    /** Metadata of the first file ({@code __metadata__}); shards normally agree. */
    public Map<String, String> metadata() { return files.isEmpty() ? Map.of() : files.getFirst().metadata(); }

    @Override public void close() {
        for (SafetensorsFile f : files) f.close();
    }

    @Override public String toString() { return "SafetensorsCheckpoint[" + path + ", " + files.size() + " file(s), " + tensors.size() + " tensors]"; }
}
