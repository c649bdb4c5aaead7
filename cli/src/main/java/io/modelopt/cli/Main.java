package io.modelopt.cli;

import io.modelopt.cli.command.BenchCommand;
import io.modelopt.cli.command.Command;
import io.modelopt.cli.command.EvaluateCommand;
import io.modelopt.cli.command.ImatrixCommand;
import io.modelopt.cli.command.GenerateCommand;
import io.modelopt.cli.command.InspectCommand;
import io.modelopt.cli.command.PerplexityCommand;
import io.modelopt.cli.command.QuantizeCommand;
import io.modelopt.cli.command.ReportCommand;
import io.modelopt.cli.command.ServeCommand;
import io.modelopt.cli.command.SynthCommand;
import io.modelopt.cli.command.TokenizeCommand;
import io.modelopt.core.ModelFormatException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code modelopt <command> [options]}: the command-line front end of the library. */
public final class Main {
    private Main() {}

    static List<Command> commands() {
        return List.of(new InspectCommand(), new TokenizeCommand(), new GenerateCommand(), new PerplexityCommand(),
                new SynthCommand(), new BenchCommand(), new QuantizeCommand(), new ImatrixCommand(), new EvaluateCommand(), new ReportCommand(),
                new ServeCommand());
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true, StandardCharsets.UTF_8);
        int code = run(args, out, err);
        out.flush();
        System.exit(code);
    }

    /** Runs one command; returns the exit code (0 ok, 1 failure, 2 usage or input error). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean quiet = Arrays.asList(args).contains(QUIET);
        if (!quiet) return dispatch(args, false, out, err);
        // before any logger exists: SLF4J's simple binding reads its level once, at the first logger
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        ProgressBar.silence();
        try {
            return dispatch(args, true, out, err);
        } finally {
            ProgressBar.unsilence(); // for this run only (tests and embedders call run more than once)
        }
    }

    private static int dispatch(String[] args, boolean quiet, PrintStream out, PrintStream err) {
        Map<String, Command> byName = new LinkedHashMap<>();
        for (Command c : commands()) byName.put(c.name(), c);
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            printHelp(byName, out);
            return args.length == 0 ? 2 : 0;
        }
        Command cmd = byName.get(args[0]);
        if (cmd == null) {
            err.println("modelopt: unknown command '" + args[0] + "'");
            printHelp(byName, err);
            return 2;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (Arrays.asList(rest).contains("--help")) {
            out.println(cmd.usage());
            out.println(GLOBAL_OPTIONS);
            return 0;
        }
        // a command that documents --quiet reads it itself (e.g. to drop its own progress table); others never see it
        if (quiet && !cmd.usage().contains(QUIET)) rest = Arrays.stream(rest).filter(a -> !a.equals(QUIET)).toArray(String[]::new);
        try {
            return cmd.run(rest, out, err);
        } catch (Args.UsageException e) {
            err.println("modelopt " + cmd.name() + ": " + e.getMessage());
            err.println(cmd.usage());
            return 2;
        } catch (ModelFormatException e) {
            err.println("modelopt " + cmd.name() + ": bad model file: " + e.getMessage());
            return 2;
        } catch (java.nio.file.NoSuchFileException e) {
            err.println("modelopt " + cmd.name() + ": no such file: " + e.getMessage());
            return 2;
        } catch (java.io.UncheckedIOException e) {
            err.println("modelopt " + cmd.name() + ": " + e.getMessage()
                    + (e.getCause() instanceof java.nio.file.NoSuchFileException ? " (no such file)" : ""));
            return 2;
        } catch (IllegalArgumentException | IllegalStateException | UnsupportedOperationException e) {
            err.println("modelopt " + cmd.name() + ": " + e.getMessage());
            return 2;
        } catch (Exception e) {
            err.println("modelopt " + cmd.name() + ": failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    private static void printHelp(Map<String, Command> byName, PrintStream out) {
        out.println("usage: modelopt <command> [options]   (modelopt <command> --help for its options)");
        out.println("commands:");
        for (Command c : byName.values()) out.printf("  %-12s %s%n", c.name(), c.summary());
        out.println(GLOBAL_OPTIONS);
    }

    private static final String QUIET = "--quiet";
    private static final String GLOBAL_OPTIONS = "every command: --quiet  no progress display and no log lines below warnings (results still printed)";
}
