package io.modelopt.cli.report;

import io.modelopt.core.kv.KvDtype;
import io.modelopt.core.model.ModelSource;
import java.util.List;
import java.util.Objects;

/**
 * One stage's model, ready to be bound to runners: its weights (the file as it is, or quantized),
 * the KV dtype the stage runs with, and whether closing it releases the weights (an in-memory
 * quantized copy that no later stage shares).
 */
final class StageModel implements AutoCloseable {
    private final ModelSource source;
    private final KvDtype kvDtype;
    private final List<String> notes;
    private final boolean owned;

    /** @param owned close {@code source} with this object (false: it is shared with a later stage, and its owner closes it) */
    StageModel(ModelSource source, KvDtype kvDtype, List<String> notes, boolean owned) {
        this.source = Objects.requireNonNull(source, "source");
        this.kvDtype = Objects.requireNonNull(kvDtype, "kvDtype");
        this.notes = List.copyOf(notes);
        this.owned = owned;
    }

    ModelSource source() { return source; }

    KvDtype kvDtype() { return kvDtype; }

    List<String> notes() { return notes; }

    /** Bytes of every tensor the stage's model holds. */
    long tensorBytes() {
        return source.tensors().values().stream().mapToLong(t -> t.byteSize()).sum();
    }

    @Override public void close() {
        if (owned) source.close();
    }
}
