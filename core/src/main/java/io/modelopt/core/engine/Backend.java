package io.modelopt.core.engine;

import io.modelopt.core.model.ModelSource;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Where models run: the CPU ({@link CpuBackend}), a CUDA device (the cuda-bindings module), ...
 * Implementations are found with {@link ServiceLoader} (registered in {@code module-info}
 * {@code provides} and in {@code META-INF/services}), so core does not depend on them.
 */
public interface Backend {
    /** The KV dtypes this backend stores and attends over (F32 and F16 unless it says more). */
    default java.util.Set<io.modelopt.core.kv.KvDtype> kvDtypes() {
        return java.util.EnumSet.of(io.modelopt.core.kv.KvDtype.F32, io.modelopt.core.kv.KvDtype.F16);
    }

    /** Short lower-case name used on command lines: "cpu", "cuda". */
    String name();

    /** Whether this backend can run here (e.g. a CUDA backend without a device says false). */
    boolean isAvailable();

    /**
     * Binds the model's weights and allocates the runner's buffers.
     *
     * @throws UnsupportedOperationException naming the architecture or tensor format this backend cannot run
     */
    ModelRunner load(ModelSource source, RunnerOptions options);

    /** All registered backends, available or not, in service-loader order. */
    static List<Backend> all() {
        List<Backend> list = new ArrayList<>();
        ServiceLoader.load(Backend.class).forEach(list::add);
        return list;
    }

    /** The registered backend called {@code name}, or an exception listing the known ones. */
    static Backend named(String name) {
        List<Backend> all = all();
        for (Backend b : all) if (b.name().equalsIgnoreCase(name)) return b;
        List<String> names = new ArrayList<>();
        for (Backend b : all) names.add(b.name());
        throw new IllegalArgumentException("no backend named '" + name + "' on the class path (registered: " + names + ")");
    }
}
