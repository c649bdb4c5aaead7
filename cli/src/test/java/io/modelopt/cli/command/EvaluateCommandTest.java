package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EvaluateCommandTest {
    private static String f32() { return Fixtures.brownGguf("f32").toString(); }

    private static String q8() { return Fixtures.brownGguf("q8_0").toString(); }

    /** The start of test.txt: 4 windows of 128 need ~2,600 characters; a shorter text tokenizes faster. */
    private static String text(Path tmp) throws Exception {
        return Files.writeString(tmp.resolve("start.txt"), Files.readString(Fixtures.file("corpora/brown/test.txt")).substring(0, 20_000)).toString();
    }

    @Test
    void printsAnAlignedTableAndTheSameNumbersAsJson(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("eval.json");
        CliRun r = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", text(tmp), "--ctx", "128", "--chunks", "4",
                "--gen-tokens", "8", "--threads", "2", "--json", json.toString());
        assertEquals(0, r.code(), r.toString());
        List<String> rows = r.out().lines().filter(l -> l.startsWith("|")).toList();
        assertEquals(2 + 5 + 3 + 6, rows.size(), r.out());   // header, rule; 2 PPL, 2 KL, top-1; 3 prompts; bits ×2, file, runner ×2, mapping
        for (String row : rows) assertEquals(rows.getFirst().length(), row.length(), "aligned:\n" + r.out());
        assertTrue(rows.get(1).matches("\\| -+ \\| -+: \\| -+: \\| -+: \\|"), rows.get(1));
        assertTrue(r.out().contains("process peak RSS"), r.out());
        assertTrue(r.err().contains("perplexity+kl (llama.cpp) 4/4 (100%)"), "plain progress lines off a terminal: " + r.err());

        Map<String, Object> j = Json.parseObject(Files.readString(json));
        Map<?, ?> base = (Map<?, ?>) j.get("base"), quant = (Map<?, ?>) j.get("quant");
        double pb = num(((Map<?, ?>) base.get("perplexity_llama_cpp")).get("perplexity"));
        double eb = num(((Map<?, ?>) base.get("perplexity_llama_cpp")).get("error"));
        double pq = num(((Map<?, ?>) quant.get("perplexity_llama_cpp")).get("perplexity"));
        String pplRow = row(rows, "perplexity, llama.cpp method (4 × 128, 252 scored)");
        assertTrue(pplRow.contains(String.format(Locale.ROOT, "%.4f ± %.4f", pb, eb)), pplRow);
        assertTrue(pplRow.contains(String.format(Locale.ROOT, "%.4f", pq)), pplRow);
        assertTrue(pplRow.contains(String.format(Locale.ROOT, "%+.3f%%", num(j.get("perplexity_change_percent_llama_cpp")))), pplRow);
        Map<?, ?> kl = (Map<?, ?>) j.get("kl_divergence");
        assertTrue(row(rows, "KL divergence base → quant, mean").contains(String.format(Locale.ROOT, "%.6f", num(kl.get("mean")))), r.out());
        double top1 = num(kl.get("top1_agreement"));
        assertTrue(top1 >= 0 && top1 <= 1, kl.toString());
        assertTrue(row(rows, "top-1 agreement").contains(String.format(Locale.ROOT, "%.3f%%", 100 * top1)), r.out());
        assertTrue(row(rows, "bits per weight, block linears").contains("32.000") && row(rows, "bits per weight, block linears").contains("8.500"), r.out());
        assertEquals(Files.size(Path.of(q8())), ((Number) quant.get("file_bytes")).longValue());
        assertTrue(row(rows, "file bytes").contains(String.format(Locale.ROOT, "%,d", Files.size(Path.of(q8())))), r.out());
        Map<?, ?> process = (Map<?, ?>) j.get("process");
        assertTrue(((Number) process.get("quant_mapped_rss_bytes")).longValue() > 0, process.toString());
        List<?> prompts = (List<?>) ((Map<?, ?>) j.get("greedy")).get("prompts");
        assertEquals(3, prompts.size());
        long agreed = ((Number) ((Map<?, ?>) prompts.getFirst()).get("agreed")).longValue();
        assertTrue(row(rows, "greedy agreement, prompt 1").contains(agreed + "/8"), r.out());
    }

    @Test
    void aModelAgainstItselfAgreesFully(@TempDir Path tmp) throws Exception {
        CliRun r = CliRun.of("evaluate", "--base", f32(), "--quant", f32(), "--text", text(tmp), "--ctx", "64", "--chunks", "2",
                "--gen-tokens", "6", "--prompts", "2", "--threads", "2", "--quiet");
        assertEquals(0, r.code(), r.toString());
        assertEquals("", r.err(), "--quiet: no progress");
        assertTrue(row(r.out().lines().toList(), "KL divergence base → quant, max").contains("0.000000"), r.out());
        assertTrue(row(r.out().lines().toList(), "top-1 agreement").contains("100.000%"), r.out());
        assertTrue(row(r.out().lines().toList(), "greedy agreement, prompt 2").contains("6/6"), r.out());
    }

    @Test
    void badInputIsAnErrorNamingTheProblem(@TempDir Path tmp) throws Exception {
        String text = text(tmp);
        CliRun missing = CliRun.of("evaluate", "--base", f32(), "--quant", tmp.resolve("nope.gguf").toString(), "--text", text);
        assertEquals(2, missing.code(), missing.toString());
        assertTrue(missing.err().contains("--quant") && missing.err().contains("nope.gguf: no such file"), missing.err());

        CliRun noText = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", tmp.resolve("none.txt").toString());
        assertEquals(2, noText.code());
        assertTrue(noText.err().contains("none.txt: no such file"), noText.err());

        CliRun unknown = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", text, "--model", f32());
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().contains("unknown option --model"), unknown.err());

        CliRun noQuant = CliRun.of("evaluate", "--base", f32(), "--text", text);
        assertEquals(2, noQuant.code());
        assertTrue(noQuant.err().contains("missing required option --quant"), noQuant.err());

        CliRun vocab = CliRun.of("evaluate", "--base", f32(), "--quant", Fixtures.storiesGguf("f32").toString(), "--text", text, "--ctx", "64");
        assertEquals(2, vocab.code());
        assertTrue(vocab.err().contains("different vocabularies (4096 vs 512 tokens)"), vocab.err());

        Path small = Files.writeString(tmp.resolve("small.txt"), "A short text.");
        CliRun shortText = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", small.toString(), "--ctx", "128");
        assertEquals(2, shortText.code());
        assertTrue(shortText.err().contains("fewer than one window of context 128"), shortText.err());

        CliRun big = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", text, "--ctx", "1024");
        assertEquals(2, big.code());
        assertTrue(big.err().contains("context 1024 exceeds the trained context length 256"), big.err());

        CliRun ctx = CliRun.of("evaluate", "--base", f32(), "--quant", q8(), "--text", text, "--ctx", "1");
        assertEquals(2, ctx.code());
        assertTrue(ctx.err().contains("--ctx must be >= 2"), ctx.err());
    }

    @Test
    void quantizeInMemoryEqualsTheFileItWouldWrite(@TempDir Path tmp) throws Exception {
        String text = text(tmp);
        String[] common = {"--base", f32(), "--text", text, "--ctx", "64", "--chunks", "2", "--gen-tokens", "0", "--threads", "2", "--quiet"};
        CliRun file = CliRun.of(concat(new String[] {"evaluate", "--quant", q8()}, common));
        CliRun memory = CliRun.of(concat(new String[] {"evaluate", "--quantize", "q8_0"}, common));
        assertEquals(0, file.code(), file.toString());
        assertEquals(0, memory.code(), memory.toString());
        // llama-quantize's Q8_0 and ours in memory are the same bytes: the same numbers
        for (String metric : List.of("perplexity, llama.cpp method", "KL divergence base → quant, mean", "top-1 agreement", "bits per weight, whole model")) {
            assertEquals(row(file.out().lines().toList(), metric), row(memory.out().lines().toList(), metric));
        }
        assertTrue(memory.out().contains("quant: q8_0") && memory.out().contains("quantized in memory"), memory.out());

        // INT3, which no file format holds, beside a ggml type: the bits count the logical weights
        CliRun int3 = CliRun.of(concat(new String[] {"evaluate", "--quantize", "rtn", "--bits", "3", "--override", "token_embd=Q4_K"}, common));
        assertEquals(0, int3.code(), int3.toString());
        assertTrue(row(int3.out().lines().toList(), "bits per weight, block linears").contains("3.156"), int3.out());

        CliRun both = CliRun.of(concat(new String[] {"evaluate", "--quant", q8(), "--quantize", "rtn"}, common));
        assertEquals(2, both.code());
        assertTrue(both.err().contains("either --quant MODEL or --quantize METHOD, not both"), both.err());
        CliRun noCalib = CliRun.of(concat(new String[] {"evaluate", "--quantize", "gptq"}, common));
        assertEquals(2, noCalib.code());
        assertTrue(noCalib.err().contains("gptq needs calibration text: --calib FILE"), noCalib.err());

        // a calibrated model's record of what it was calibrated on is in the report
        CliRun gptq = CliRun.of(concat(new String[] {"evaluate", "--quantize", "gptq", "--calib", text, "--samples", "4", "--seq-len", "32"}, common));
        assertEquals(0, gptq.code(), gptq.toString());
        assertTrue(gptq.out().lines().anyMatch(l -> l.startsWith("calibration: 4 x 32 tokens")), gptq.out());
        assertTrue(file.out().lines().noneMatch(l -> l.startsWith("calibration:")), "an uncalibrated model has no calibration line");
    }

    /** The record as a Hugging Face checkpoint carries it (quantization_config.modelopt_calibration), and as in memory. */
    @Test
    void calibrationRecordIsReadFromEitherPlace() {
        assertEquals(java.util.Optional.of("16 x 128 tokens (random, seed 0) from t.txt"), io.modelopt.quantization.calib.CalibratedModelQuantizer.calibrationRecord(
                java.util.Map.of("quantization_config", java.util.Map.of("quant_method", "gptq", "modelopt_calibration", "16 x 128 tokens (random, seed 0) from t.txt"))));
        assertEquals(java.util.Optional.of("8 x 64"), io.modelopt.quantization.calib.CalibratedModelQuantizer.calibrationRecord(java.util.Map.of("modelopt.calibration", "8 x 64")));
        assertEquals(java.util.Optional.empty(), io.modelopt.quantization.calib.CalibratedModelQuantizer.calibrationRecord(java.util.Map.of("quantization_config", java.util.Map.of("bits", 4))));
        assertEquals(java.util.Optional.empty(), io.modelopt.quantization.calib.CalibratedModelQuantizer.calibrationRecord(null));
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    private static String row(List<String> lines, String metric) {
        return lines.stream().filter(l -> l.startsWith("| " + metric)).findFirst().orElseThrow(() -> new AssertionError("no row " + metric + " in\n" + lines));
    }

    private static double num(Object o) { return ((Number) o).doubleValue(); }
}
