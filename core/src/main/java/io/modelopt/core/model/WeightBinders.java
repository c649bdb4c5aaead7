package io.modelopt.core.model;

import io.modelopt.core.kernel.WeightMatrix;
import io.modelopt.core.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** The registered {@link WeightBinder}s, found once with {@link ServiceLoader}. */
public final class WeightBinders {
    private WeightBinders() {}

    private static final List<WeightBinder> BINDERS = load();

    private static List<WeightBinder> load() {
        List<WeightBinder> list = new ArrayList<>();
        for (WeightBinder b : ServiceLoader.load(WeightBinder.class, WeightBinders.class.getClassLoader())) list.add(b);
        return List.copyOf(list);
    }

    /** Every registered binder, in the order they were found. */
    public static List<WeightBinder> all() { return BINDERS; }

    /** Whether some binder reads a tensor of this name and type. */
    public static boolean claimed(String canonicalName, GgmlType type) {
        for (WeightBinder b : BINDERS) if (b.claims(canonicalName, type)) return true;
        return false;
    }

    /** The first binder's binding of {@code weightName}, or null when none recognizes it. */
    public static WeightMatrix bind(ModelSource source, String weightName) {
        for (WeightBinder b : BINDERS) {
            WeightMatrix w = b.bind(source, weightName);
            if (w != null) return w;
        }
        return null;
    }
}
