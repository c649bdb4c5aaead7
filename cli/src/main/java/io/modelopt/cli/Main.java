package io.modelopt.cli;

/** Placeholder entry point; the CLI work replaces it. */
public final class Main {
    public static void main(String[] args) {
        System.out.println("modelopt");
    }
}
