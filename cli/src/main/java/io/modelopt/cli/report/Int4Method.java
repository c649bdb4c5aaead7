package io.modelopt.cli.report;

import io.modelopt.cli.Args;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How stage 3 makes its INT4 weights ({@code --method}). RTN is the default while calibrated
 * quantization does not exist yet: the report labels it as RTN instead of calling it AWQ, so no
 * number in the table claims more than was run.
 */
public enum Int4Method {
    RTN("rtn", "INT4 RTN g128", false),
    AWQ("awq", "INT4 AWQ g128", true),
    GPTQ("gptq", "INT4 GPTQ g128", true),
    AWQ_GPTQ("awq+gptq", "INT4 AWQ+GPTQ g128", true),
    Q4_K_M("q4_k_m", "Q4_K_M (llama.cpp mix)", false);

    private final String key, label;
    private final boolean calibrated;

    Int4Method(String key, String label, boolean calibrated) {
        this.key = key;
        this.label = label;
        this.calibrated = calibrated;
    }

    public String key() { return key; }

    /** What the table's configuration column calls it. */
    public String label() { return label; }

    /** Whether it needs calibration text ({@code --calib}). */
    public boolean calibrated() { return calibrated; }

    public static Int4Method parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (Int4Method m : values()) if (m.key.equals(t)) return m;
        throw new Args.UsageException("unknown --method '" + text + "' (one of " + names() + ")");
    }

    public static String names() {
        return Arrays.stream(values()).map(Int4Method::key).collect(Collectors.joining(", "));
    }
}
