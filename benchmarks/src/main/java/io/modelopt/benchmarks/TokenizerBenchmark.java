package io.modelopt.benchmarks;

import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.gguf.GgufVocabularyReader;
import io.modelopt.core.tokenizer.Tokenizer;
import io.modelopt.core.tokenizer.Tokenizers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Encoding the whole Brown test split (300 KB, 86,136 tokens) as one string with the brown-llama
 * tokenizer, through tokenizer.json and through the GGUF vocabulary; and decoding it back. One
 * string with no pre-tokenizer is the worst case for BPE merging (a single 300K-symbol word),
 * which the heap-based merge keeps O(n log n).
 *
 * <p>Fixtures come from {@code -Dmodelopt.shared.dir} (default {@code ../shared}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class TokenizerBenchmark {
    private String text;
    private Tokenizer hf;
    private Tokenizer gguf;
    private int[] ids;

    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path fixtures = Path.of(System.getProperty("modelopt.shared.dir", "../shared")).resolve("fixtures");
        text = Files.readString(fixtures.resolve("corpora/brown/test.txt"));
        hf = Tokenizers.fromHuggingFace(fixtures.resolve("brown-llama/hf"));
        try (GgufFile f = GgufFile.open(fixtures.resolve("brown-llama/gguf/brown-llama-f32.gguf"))) {
            gguf = Tokenizers.fromGguf(GgufVocabularyReader.read(f));
        }
        ids = gguf.encode(text);
        if (ids.length != 86_137 || hf.encode(text).length != 86_137)
            throw new IllegalStateException("expected 86,137 tokens with BOS, got " + ids.length);
    }

    @Benchmark
    public int[] encodeWholeFileHf() { return hf.encode(text); }

    @Benchmark
    public int[] encodeWholeFileGguf() { return gguf.encode(text); }

    @Benchmark
    public String decodeWholeFileGguf() { return gguf.decode(ids); }
}
