package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.cli.Main;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.json.Json;
import io.modelopt.core.synthetic.SyntheticSpec;
import io.modelopt.core.tensor.GgmlType;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** synth and bench end to end on the micro preset (the default small125m is left to real runs). */
class BenchCommandTest {
    @TempDir Path dir;

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Path synthMicro(String type) {
        Path file = dir.resolve("micro-" + type + ".gguf");
        Result r = run("synth", "--preset", "micro", "--type", type, "--out", file.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals(file.toAbsolutePath().toString(), r.out().trim());
        return file;
    }

    @Test
    void synthWritesTheRequestedPresetAndTypeAndRefusesToOverwrite() {
        Path file = synthMicro("q4_0");
        try (GgufModelSource src = GgufModelSource.open(file)) {
            assertEquals(SyntheticSpec.MICRO.hiddenSize(), src.config().hiddenSize());
            assertEquals(GgmlType.Q4_0, src.tensors().get("blk.0.attn_q.weight").type());
        }
        Result again = run("synth", "--preset", "micro", "--out", file.toString());
        assertEquals(2, again.code());
        assertTrue(again.err().contains("--force"), again.err());
        assertEquals(2, run("synth", "--preset", "nosuch").code());
        assertEquals(2, run("synth", "--format", "hf", "--type", "q8_0", "--out", dir.resolve("x").toString()).code());
    }

    @Test
    void synthWritesAnHfDirectory() {
        Path hf = dir.resolve("hf");
        Result r = run("synth", "--preset", "micro", "--type", "f16", "--format", "hf", "--out", hf.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(Files.isRegularFile(hf.resolve("model.safetensors")));
        assertTrue(Files.isRegularFile(hf.resolve("config.json")));
    }

    @Test
    @SuppressWarnings("unchecked")
    void benchReportsSpeedsKvBytesAndMemoryAsTextAndJson() throws Exception {
        Path model = synthMicro("q8_0");
        Path json = dir.resolve("bench.json");
        Result r = run("bench", "--model", model.toString(), "--prompt-tokens", "16", "--gen-tokens", "4", "--runs", "2",
                "--threads", "2", "--json", json.toString());
        assertEquals(0, r.code(), r.err());
        for (String label : List.of("TTFT", "prefill", "decode", "KV cache", "memory", "weights")) {
            assertTrue(r.out().contains(label), "no " + label + " in\n" + r.out());
        }
        Map<String, Object> j = Json.parseObject(Files.readString(json));
        assertTrue(j.keySet().containsAll(Set.of("weight_bytes", "ttft_ms", "prefill_tokens_per_s", "decode_tokens_per_s", "kv_cache_bytes",
                "heap_used_bytes", "threads", "prompt_tokens", "gen_tokens")), j.keySet().toString());
        long tensorBytes;
        try (GgufModelSource src = GgufModelSource.open(model)) {
            tensorBytes = src.tensors().values().stream().mapToLong(t -> t.byteSize()).sum();
        }
        assertEquals(tensorBytes, ((Number) j.get("tensor_bytes")).longValue());
        // 2 layers × (K + V) × 20 positions × kvDim 32 × F16
        assertEquals(2L * 2 * 20 * 32 * 2, ((Number) j.get("kv_cache_bytes")).longValue());
        Map<String, Object> decode = (Map<String, Object>) j.get("decode_tokens_per_s");
        assertEquals(2, ((List<?>) decode.get("values")).size());
        double min = ((Number) decode.get("min")).doubleValue(), med = ((Number) decode.get("median")).doubleValue();
        assertTrue(min > 0 && min <= med && med <= ((Number) decode.get("max")).doubleValue(), decode.toString());
        if (Files.isReadable(Path.of("/proc/self/smaps"))) {
            long mapped = ((Number) j.get("model_mapped_bytes")).longValue();
            // the tensor data is mapped once (no copies): at least the tensor bytes, at most the file rounded up to pages
            assertTrue(mapped >= tensorBytes && mapped <= Files.size(model) + 65536, mapped + " mapped, " + tensorBytes + " tensor bytes");
            assertTrue(((Number) j.get("model_mapped_rss_bytes")).longValue() > 0);
            assertTrue(((Number) j.get("rss_peak_bytes")).longValue() >= ((Number) j.get("rss_bytes")).longValue());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void benchKvCompareRunsBothLayoutsInPairsAndReportsTheirRatio() throws Exception {
        Path model = synthMicro("q8_0");
        Path json = dir.resolve("compare.json");
        Result r = run("bench", "--model", model.toString(), "--prompt-tokens", "40", "--gen-tokens", "4", "--runs", "3",
                "--threads", "1", "--kv-compare", "--json", json.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("decode paged") && r.out().contains("paged/contig"), r.out());
        assertTrue(r.out().contains("contiguous and paged, alternating"), r.out());
        Map<String, Object> c = (Map<String, Object>) Json.parseObject(Files.readString(json)).get("kv_compare");
        Map<String, Object> ratio = (Map<String, Object>) c.get("paged_over_contiguous_decode");
        List<Object> pairs = (List<Object>) ratio.get("values");
        assertEquals(3, pairs.size(), "one ratio per measured pair");
        for (Object v : pairs) assertTrue(((Number) v).doubleValue() > 0, "ratio " + v);
        Result both = run("bench", "--model", model.toString(), "--kv-compare", "--kv-paged");
        assertEquals(2, both.code());
        assertTrue(both.err().contains("--kv-compare"), both.err());
    }

    @Test
    void benchRejectsBadOptions() {
        assertEquals(2, run("bench", "--runs", "0").code());
        assertEquals(2, run("bench", "--model", "x.gguf", "--type", "q4_0").code());
        assertEquals(2, run("bench", "--type", "q5_k").code());
        Path model = synthMicro("f32");
        Result r = run("bench", "--model", model.toString(), "--prompt-tokens", "100", "--gen-tokens", "100");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("context length 128"), r.err());
    }

    @Test
    void benchConcurrencyRunsTheEngineAndPrintsTheAggregateLine() {
        Path model = synthMicro("f32");
        Result r = run("bench", "--model", model.toString(), "--concurrency", "4", "--requests", "6", "--prompt-tokens", "16", "--gen-tokens", "8",
                "--shared-prefix", "8", "--threads", "2");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("aggregate decode:"), r.out());
        assertTrue(r.out().contains("end-to-end aggregate:") && r.out().contains("48 generated tokens"), r.out());
        assertTrue(r.out().contains("TTFT ms: p50") && r.out().contains("ITL ms:"), r.out());
        assertEquals(2, run("bench", "--model", model.toString(), "--concurrency", "0").code());
        assertEquals(2, run("bench", "--model", model.toString(), "--concurrency", "2", "--prompt-tokens", "16", "--shared-prefix", "16").code());
    }
}
