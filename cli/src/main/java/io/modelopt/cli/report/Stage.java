package io.modelopt.cli.report;

import io.modelopt.cli.Args;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The optimization steps the report compares, in the order issue 21 defines them: each adds one
 * optimization to the one before, so the table reads as "what each step buys and costs".
 */
public enum Stage {
    BASELINE(1, "baseline"),
    INT8(2, "int8"),
    INT4(3, "int4"),
    INT4_KV8_ENGINE(4, "int4+kv8+engine");

    private final int number;
    private final String key;

    Stage(int number, String key) {
        this.number = number;
        this.key = key;
    }

    /** 1-based number, as {@code --stages} and the table name it. */
    public int number() { return number; }

    /** Short machine name (CSV, JSON, SVG ids). */
    public String key() { return key; }

    public static Stage ofNumber(int n) {
        for (Stage s : values()) if (s.number == n) return s;
        throw new Args.UsageException("unknown stage " + n + " (stages are 1 to " + values().length + ")");
    }

    /**
     * {@code --stages 1,2,3,4}: numbers (or keys) separated by commas, each once; returned in stage
     * order whatever the order given, since each stage is described relative to the one before.
     */
    public static List<Stage> parseList(String text) {
        if (text == null || text.isBlank()) throw new Args.UsageException("--stages needs at least one stage, e.g. --stages 1,3");
        Set<Stage> chosen = EnumSet.noneOf(Stage.class);
        for (String part : text.split(",")) {
            String p = part.trim().toLowerCase(Locale.ROOT);
            Stage s = null;
            for (Stage c : values()) if (c.key.equals(p)) s = c;
            if (s == null) {
                try {
                    s = ofNumber(Integer.parseInt(p));
                } catch (NumberFormatException e) {
                    throw new Args.UsageException("unknown stage '" + part.trim() + "' in --stages (use 1,2,3,4 or baseline,int8,int4,int4+kv8+engine)");
                }
            }
            if (!chosen.add(s)) throw new Args.UsageException("stage " + s.number + " appears twice in --stages");
        }
        return new ArrayList<>(chosen);
    }
}
