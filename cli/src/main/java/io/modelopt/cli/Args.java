package io.modelopt.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line arguments of one subcommand: {@code --name value} options, {@code --flag}
 * switches and positionals. Every option must be declared by the command, so a typo is an error
 * that names it rather than a silently ignored setting.
 */
public final class Args {
    private final Map<String, String> options = new LinkedHashMap<>();
    private final List<String> positionals = new ArrayList<>();
    /** Every valued option in command-line order, repeats included ({@code --keep A --keep B}). */
    private final List<Map.Entry<String, String>> occurrences = new ArrayList<>();

    private Args() {}

    /**
     * @param valued names (without "--") that take a value
     * @param flags  names that take none
     */
    public static Args parse(String[] argv, Set<String> valued, Set<String> flags) {
        Args a = new Args();
        for (int i = 0; i < argv.length; i++) {
            String s = argv[i];
            if (s.startsWith("--") && s.length() > 2) {
                String name = s.substring(2);
                String value = null;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                }
                if (flags.contains(name)) {
                    if (value != null) throw new UsageException("option --" + name + " takes no value");
                    a.options.put(name, "true");
                } else if (valued.contains(name)) {
                    if (value == null) {
                        if (i + 1 >= argv.length) throw new UsageException("option --" + name + " needs a value");
                        value = argv[++i];
                    }
                    a.options.put(name, value);
                    a.occurrences.add(Map.entry(name, value));
                } else {
                    throw new UsageException("unknown option --" + name);
                }
            } else {
                a.positionals.add(s);
            }
        }
        return a;
    }

    public boolean has(String name) { return options.containsKey(name); }

    public String get(String name, String def) { return options.getOrDefault(name, def); }

    public String require(String name) {
        String v = options.get(name);
        if (v == null) throw new UsageException("missing required option --" + name);
        return v;
    }

    public int getInt(String name, int def) {
        String v = options.get(name);
        if (v == null) return def;
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public long getLong(String name, long def) {
        String v = options.get(name);
        if (v == null) return def;
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public double getDouble(String name, double def) {
        String v = options.get(name);
        if (v == null) return def;
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number, got '" + v + "'");
        }
    }

    public List<String> positionals() { return List.copyOf(positionals); }

    /** Valued options in command-line order, a repeated one each time it was given ({@link #get} returns its last value). */
    public List<Map.Entry<String, String>> occurrences() { return List.copyOf(occurrences); }

    /** Thrown for bad command lines; the CLI prints the message and the command's usage. */
    public static final class UsageException extends RuntimeException {
        public UsageException(String message) { super(message); }
    }
}
