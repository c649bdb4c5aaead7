package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.core.ModelOptimizer;
import io.modelopt.core.tokenizer.Tokenizer;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/** {@code modelopt tokenize --model MODEL --text TEXT}: prints the token ids (with BOS as the model adds it). */
public final class TokenizeCommand implements Command {
    @Override public String name() { return "tokenize"; }

    @Override public String summary() { return "print the token ids of a text"; }

    @Override public String usage() {
        return """
                usage: modelopt tokenize --model MODEL (--text TEXT | --file FILE) [--no-bos] [--pieces]
                  --text TEXT   the text to tokenize
                  --file FILE   tokenize a whole file as one string
                  --no-bos      do not add BOS/EOS even if the tokenizer adds them
                  --pieces      print id and piece per line instead of the id list""";
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "text", "file"), Set.of("no-bos", "pieces"));
        String text;
        if (args.has("text")) text = args.get("text", "");
        else if (args.has("file")) text = Files.readString(Path.of(args.get("file", null)));
        else throw new Args.UsageException("give --text TEXT or --file FILE");
        try (ModelOptimizer m = ModelOptimizer.load(Path.of(args.require("model")))) {
            Tokenizer tok = m.tokenizer();
            int[] ids = tok.encode(text, !args.has("no-bos"), true);
            if (args.has("pieces")) {
                for (int id : ids) out.println(id + "\t" + tok.piece(id));
            } else {
                out.println(Arrays.toString(ids));
            }
            if (args.has("file")) err.println(ids.length + " tokens");
        }
        return 0;
    }
}
