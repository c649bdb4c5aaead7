package io.modelopt.core.kernel;

import java.util.List;

/**
 * Adds weight formats to {@link WeightFormats} from outside core (the quantization module's
 * group-wise INT4 or per-channel INT8, or a test's own format), found with
 * {@link java.util.ServiceLoader}: declare it in {@code module-info} ({@code provides}) and in
 * {@code META-INF/services/io.modelopt.core.kernel.WeightFormatProvider}, so that it works on the
 * module path and on the class path alike.
 */
public interface WeightFormatProvider {
    /** The formats this provider brings; their names must not clash with the table's. */
    List<WeightFormat> formats();
}
