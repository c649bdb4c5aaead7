package io.modelopt.cli.command;

import java.io.PrintStream;

/** One {@code modelopt} subcommand. */
public interface Command {
    String name();

    /** One line for the command list. */
    String summary();

    /** The usage text shown with {@code --help} or after a usage error. */
    String usage();

    /** Runs the command; returns the process exit code. */
    int run(String[] args, PrintStream out, PrintStream err) throws Exception;
}
