package io.modelopt.cli.command;

import io.modelopt.cli.Args;
import io.modelopt.cli.ProgressBar;
import io.modelopt.core.engine.Backend;
import io.modelopt.core.engine.ModelRunner;
import io.modelopt.core.engine.RunnerOptions;
import io.modelopt.core.loader.ModelSources;
import io.modelopt.core.model.ModelSource;
import io.modelopt.quantization.calib.CalibrationData;
import io.modelopt.quantization.calib.CalibrationRecord;
import io.modelopt.quantization.calib.ImatrixCollector;
import io.modelopt.quantization.gguf.ImatrixWriter;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code modelopt imatrix}: llama-imatrix's importance matrix (per linear, per input column, the
 * mean squared activation) over consecutive chunks of the calibration text, written in its legacy
 * file format for {@code quantize --imatrix}.
 */
public final class ImatrixCommand implements Command {
    @Override public String name() { return "imatrix"; }

    @Override public String summary() { return "collect an importance matrix (llama-imatrix's) for imatrix k-quants"; }

    @Override public String usage() {
        return """
                usage: modelopt imatrix --model MODEL --calib FILE [--calib FILE ...] --out FILE [options]
                  --model PATH          a float model (.gguf or Hugging Face directory)
                  --calib FILE          calibration text (repeatable; *.ids/*.tokens: token ids), tokenized as llama-imatrix does
                  --out FILE            the imatrix file to write (llama.cpp's legacy format)
                  --chunks N            at most N chunks (default: all the text gives)
                  --ctx C               tokens per chunk (default 512, as llama-imatrix; at most the model's context)
                  --threads T           worker threads (default: all processors)
                %s
                Each chunk starts with BOS when the tokenizer adds one. Same chunks and context as llama-imatrix
                give its imatrix within float rounding.
                example:
                  modelopt imatrix --model brown-llama-f32.gguf --calib train.txt --ctx 256 --chunks 128 --out brown.imatrix""".formatted(CommandOptions.BACKEND_USAGE);
    }

    @Override public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args args = Args.parse(argv, Set.of("model", "calib", "out", "chunks", "ctx", "threads", "backend"), Set.of());
        if (!args.positionals().isEmpty()) throw new Args.UsageException("unexpected argument '" + args.positionals().getFirst() + "'");
        if (!args.has("model")) throw new Args.UsageException("--model is required");
        if (!args.has("calib")) throw new Args.UsageException("--calib is required");
        if (!args.has("out")) throw new Args.UsageException("--out is required");
        List<Path> files = new ArrayList<>();
        for (Map.Entry<String, String> o : args.occurrences()) {
            if (o.getKey().equals("calib")) {
                Path f = Path.of(o.getValue());
                if (!Files.isRegularFile(f)) throw new IllegalArgumentException("no such calibration file: " + f);
                files.add(f);
            }
        }
        Path output = Path.of(args.get("out", null));
        Backend backend = CommandOptions.backend(args);
        int threads = args.getInt("threads", Runtime.getRuntime().availableProcessors());
        long t0 = System.nanoTime();
        try (ModelSource source = ModelSources.open(Path.of(args.get("model", null)))) {
            int trained = source.config().contextLength();
            int ctx = args.getInt("ctx", 512);
            if (trained > 0 && ctx > trained) throw new IllegalArgumentException("--ctx " + ctx + " exceeds the model's context of " + trained);
            int chunks = args.getInt("chunks", Integer.MAX_VALUE);
            if (chunks < 1) throw new IllegalArgumentException("--chunks must be positive, got " + chunks);
            CalibrationData data = CalibrationData.load(files, source.tokenizer(), chunks, ctx, 0, CalibrationRecord.Sampling.SEQUENTIAL);
            ImatrixCollector collector = new ImatrixCollector(source.tensors().keySet());
            try (ModelRunner runner = backend.load(source, RunnerOptions.builder().threads(threads).maxBatchTokens(ctx)
                    .maxLogitsRows(1).contextLength(ctx).build())) {
                collector.run(runner, data, ctx, new ProgressBar(err));
            }
            ImatrixWriter.write(output, collector.entries(), collector.chunks(), files.getFirst().toString());
            err.printf(Locale.ROOT, "imatrix: %d entries over %d chunks of %d tokens (%s) -> %s in %.1f s%n", collector.entries().size(),
                    collector.chunks(), ctx, data.record(), output, (System.nanoTime() - t0) / 1e9);
        }
        out.println(output.toAbsolutePath());
        return 0;
    }
}
