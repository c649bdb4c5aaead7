package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code modelopt report} end to end on the micro synthetic model (1 run, a few tokens), and its errors. */
class ReportCommandTest {
    @TempDir static Path dir;
    static Path model;

    /** Few runs and tokens: the test checks the wiring and the files, not the speed. */
    private static final String[] FAST = {"--runs", "1", "--warmup", "0", "--prompt-tokens", "8", "--gen-tokens", "2", "--threads", "1",
            "--ctx", "16", "--chunks", "2", "--concurrent-gen-tokens", "3"};

    @BeforeAll
    static void micro() {
        model = dir.resolve("micro-f16.gguf");
        CliRun r = CliRun.of("synth", "--preset", "micro", "--type", "f16", "--out", model.toString());
        assertEquals(0, r.code(), r.toString());
    }

    private static CliRun report(String... args) {
        String[] all = new String[args.length + FAST.length + 1];
        all[0] = "report";
        System.arraycopy(args, 0, all, 1, args.length);
        System.arraycopy(FAST, 0, all, 1 + args.length, FAST.length);
        return CliRun.of(all);
    }

    @Test
    @SuppressWarnings("unchecked")
    void runsTheStagesPrintsTheTableAndWritesCsvJsonAndSvg() throws Exception {
        Path out = dir.resolve("out"), json = dir.resolve("extra.json");
        CliRun r = report("--model", model.toString(), "--stages", "1,2,3,4", "--method", "q4_k_m", "--out", out.toString(), "--json", json.toString());
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("| 1 baseline "), r.out());
        assertTrue(r.out().contains("| 3 int4 "), r.out());
        assertTrue(r.out().contains("Method: per stage no warm-up, then 1 measured runs"), r.out());
        assertTrue(r.out().contains("Rule: the fastest stage"), r.out());
        assertTrue(r.out().contains("| 2 int8 "), r.out());
        assertTrue(r.out().contains("| 4 int4+kv8+engine "), r.out());
        assertTrue(r.err().contains("stage 3 of 4 (int4): quantizing"), "progress names the stage and what it does:\n" + r.err());
        for (String f : List.of("report.md", "report.csv", "report.json", "report.svg")) assertTrue(Files.size(out.resolve(f)) > 0, f);
        assertEquals(Files.readString(out.resolve("report.json")), Files.readString(json));
        Map<String, Object> j = Json.parseObject(Files.readString(json));
        List<Map<String, Object>> stages = (List<Map<String, Object>>) j.get("stages");
        assertEquals(4, stages.size());
        Map<String, Object> base = stages.get(0), int8 = stages.get(1), int4 = stages.get(2);
        assertEquals(true, base.get("available"));
        assertEquals(true, int8.get("available"));
        assertEquals(true, int4.get("available"));
        Map<String, Object> engine = stages.get(3);
        assertEquals(true, engine.get("available"));
        assertEquals(int4.get("weight_bytes"), engine.get("weight_bytes"), "stage 4 runs stage 3's weights");
        for (Map<String, Object> st : stages) {
            assertEquals(8L, ((Number) st.get("concurrent8_requests")).longValue());
            assertEquals(st == engine, st.get("concurrent8_through_engine"));
            double tps = ((Number) st.get("concurrent8_tokens_per_s")).doubleValue();
            double mean = ((Number) st.get("concurrent8_mean_completion_s")).doubleValue(), p95 = ((Number) st.get("concurrent8_p95_completion_s")).doubleValue();
            double ttft = ((Number) st.get("concurrent8_p95_ttft_ms")).doubleValue();
            long generated = ((Number) st.get("concurrent8_generated_tokens")).longValue();
            assertTrue(generated >= 8 && generated <= 8 * 3, "8 requests of at most 3 tokens: " + generated);
            assertTrue(tps > 0 && mean > 0 && p95 >= mean && ttft > 0 && ttft <= p95 * 1000, st.toString());
        }
        // one at a time, the last request waits for the other seven: its completion is several requests long
        double seqMean = ((Number) int4.get("concurrent8_mean_completion_s")).doubleValue(), seqP95 = ((Number) int4.get("concurrent8_p95_completion_s")).doubleValue();
        assertTrue(seqP95 > 1.5 * seqMean, "sequential: p95 " + seqP95 + " vs mean " + seqMean);
        // INT8 KV: 1 byte per entry plus an F32 scale per token and head, against F16's 2 bytes (micro: 2 layers, kvDim 32, head 8?)
        double kv16 = ((Number) int4.get("kv_bytes_per_token")).doubleValue(), kv8 = ((Number) engine.get("kv_bytes_per_token")).doubleValue();
        assertEquals(2.0 * 2 * 32 * 2, kv16, 1e-9, "micro: 2 layers x (K + V) x kvDim 32 x 2 bytes");
        assertTrue(kv8 < 0.7 * kv16 && kv8 >= kv16 / 2, kv8 + " vs " + kv16);
        // the engine's KV is its pool: 8 requests x ceil((64 + 16 + 3) / 16) blocks x 16 slots
        assertEquals(8L * 6 * 16 * kv8, ((Number) engine.get("kv_bytes")).doubleValue(), 1e-6);
        assertTrue(r.out().contains("Concurrency (8x columns): 8 requests submitted at once"), r.out());
        double bpw8 = ((Number) int8.get("bits_per_weight")).doubleValue();
        assertTrue(bpw8 < 16 && bpw8 > 8, "INT8 per channel with F16 embeddings kept (micro: a large share): " + bpw8);
        assertTrue(((Number) int8.get("mean_kl_nats")).doubleValue() < ((Number) int4.get("mean_kl_nats")).doubleValue(), "INT8 closer than Q4_K_M");
        // Q4_K_M stores fewer bits than F16 and its distributions differ a little but not nothing
        double bpwBase = ((Number) base.get("bits_per_weight")).doubleValue(), bpw4 = ((Number) int4.get("bits_per_weight")).doubleValue();
        assertTrue(bpwBase > 15.9 && bpwBase < 16.5, "F16 with F32 norms: " + bpwBase);
        assertTrue(bpw4 < 8, "Q4_K_M with a Q6_K output and F32 norms on a tiny model: " + bpw4);
        assertTrue(((Number) int4.get("weight_bytes")).longValue() < ((Number) base.get("weight_bytes")).longValue() / 2);
        double kl = ((Number) int4.get("mean_kl_nats")).doubleValue();
        assertTrue(kl > 0 && kl < 1, "KL " + kl);
        assertEquals(2L * 7, ((Number) int4.get("eval_positions")).longValue(), "2 windows of 16, positions 8..14 scored");
        // micro: 2 layers × (K + V) × 10 positions × kvDim 32 × F16
        assertEquals(2L * 2 * 10 * 32 * 2, ((Number) base.get("kv_bytes")).longValue());
        if (Files.isReadable(Path.of("/proc/self/status"))) {
            long peak = ((Number) base.get("rss_peak_bytes")).longValue(), steady = ((Number) base.get("rss_steady_bytes")).longValue();
            assertTrue(peak >= steady && steady > 0, peak + " " + steady);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void byDefaultStageThreeIsCalibratedOnSyntheticTokensAndStageFourReusesItsWeights() throws Exception {
        Path out = dir.resolve("out-calibrated");
        CliRun r = report("--model", model.toString(), "--stages", "3,4", "--calib-samples", "2", "--calib-tokens", "16", "--out", out.toString());
        assertEquals(0, r.code(), r.toString());
        Map<String, Object> j = Json.parseObject(Files.readString(out.resolve("report.json")));
        List<Map<String, Object>> stages = (List<Map<String, Object>>) j.get("stages");
        String config = (String) stages.get(0).get("configuration");
        // AWQ when the build has its quantizer, else GPTQ: a calibrated INT4 g128 either way, never RTN without saying so
        assertTrue(config.startsWith("INT4 AWQ g128") || config.startsWith("INT4 GPTQ g128"), config);
        assertTrue(r.out().contains("Calibration ("), r.out());
        assertTrue(r.out().contains("calibrated on 2 x 16 uniformly random token ids (seed 1234)"), r.out());
        assertTrue(r.out().contains("Note, stage 4: the weights of stage 3 (quantized once"), r.out());
        assertTrue(((String) stages.get(1).get("configuration")).contains("INT8 KV, engine"), stages.get(1).toString());
        assertEquals(1, r.err().split("stage 4 of 4 \\(int4\\+kv8\\+engine\\): quantizing", -1).length, "stage 4 does not quantize again:\n" + r.err());
    }

    /** {@code --no-duo-scaling} reaches stage 3's AWQ (its note names the rule) and is refused for a method without it. */
    @Test
    void noDuoScalingReachesAwqAndIsRefusedElsewhere() {
        Path out = dir.resolve("out-noduo");
        CliRun r = report("--model", model.toString(), "--stages", "3", "--method", "awq", "--no-duo-scaling", "--calib-samples", "2",
                "--calib-tokens", "16", "--quiet", "--out", out.toString());
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("quantized as awq INT4 g128 asym no-duo-scaling"), r.out());
        CliRun bad = report("--model", model.toString(), "--stages", "3", "--method", "gptq", "--no-duo-scaling", "--out", out.toString());
        assertEquals(2, bad.code(), bad.toString());
        assertTrue(bad.err().contains("--no-duo-scaling applies to --method awq and awq+gptq, not gptq"), bad.err());
    }

    @Test
    @SuppressWarnings("unchecked")
    void withTextItReportsPerplexityAndItsChangeAsThePerplexityCommandMeasuresIt() throws Exception {
        Path text = dir.resolve("text.txt");
        Files.writeString(text, "the quick brown fox jumps over the lazy dog and then runs far away into the woods. ".repeat(8));
        Path out = dir.resolve("out-text");
        CliRun r = report("--model", model.toString(), "--stages", "1,2", "--text", text.toString(), "--max-ppl-increase", "1", "--out", out.toString());
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().contains("| PPL "), r.out());
        assertTrue(r.out().contains("+0.00 %"), r.out());
        Map<String, Object> j = Json.parseObject(Files.readString(out.resolve("report.json")));
        List<Map<String, Object>> stages = (List<Map<String, Object>>) j.get("stages");
        double base = ((Number) stages.get(0).get("perplexity")).doubleValue(), int8 = ((Number) stages.get(1).get("perplexity")).doubleValue();
        double change = ((Number) stages.get(1).get("perplexity_change_percent")).doubleValue();
        assertEquals((int8 / base - 1) * 100, change, 1e-9, "the change is against the baseline row's perplexity");
        assertTrue(int8 != base, "INT8 changes the logits a little");
        // the baseline's perplexity is modelopt perplexity's on the same text, context and windows
        CliRun ppl = CliRun.of("perplexity", "--model", model.toString(), "--text", text.toString(), "--ctx", "16", "--chunks", "2", "--threads", "1");
        assertEquals(0, ppl.code(), ppl.toString());
        double expected = Double.parseDouble(ppl.lastLine().replace("perplexity:", "").trim());
        assertEquals(expected, base, expected * 1e-4, ppl.lastLine());
    }

    @Test
    void aBudgetNoStageMeetsIsReportedAndFailsOnlyWithRequire() {
        Path out = dir.resolve("out-budget");
        CliRun soft = report("--model", model.toString(), "--stages", "1", "--memory-budget", "1", "--out", out.toString());
        assertEquals(0, soft.code(), soft.toString());
        assertTrue(soft.out().contains("No stage meets the bounds"), soft.out());
        assertTrue(soft.out().contains("stage 1: memory "), soft.out());
        CliRun hard = report("--model", model.toString(), "--stages", "1", "--memory-budget", "1KiB", "--require", "--quiet", "--out", out.toString());
        assertEquals(ReportCommand.EXIT_NO_STAGE_MEETS, hard.code(), hard.toString());
        assertTrue(hard.err().contains("no stage meets the bounds (--require)"), hard.err());
        assertFalse(hard.err().contains("stage 1 of 1"), "--quiet: no progress\n" + hard.err());
    }

    @Test
    void badInputExitsNonZeroNamingTheProblem() throws Exception {
        Path corrupt = dir.resolve("corrupt.gguf");
        Files.write(corrupt, new byte[] {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 2, 3});
        Path textDir = dir.resolve("a-folder");
        Files.createDirectories(textDir);
        String m = model.toString();
        expect(2, "no such model file", "--model", dir.resolve("missing.gguf").toString());
        expect(2, "bad model file", "--model", corrupt.toString());
        expect(2, "unknown stage 5", "--model", m, "--stages", "1,5");
        expect(2, "unknown stage 'x'", "--model", m, "--stages", "x");
        expect(2, "appears twice", "--model", m, "--stages", "1,1");
        expect(2, "unknown --method 'awq4'", "--model", m, "--method", "awq4");
        expect(2, "--bits must be 2, 3, 4 or 8, got 5", "--model", m, "--bits", "5");
        expect(2, "--bits and --group-size apply to rtn, awq and gptq", "--model", m, "--method", "q4_k_m", "--group-size", "32");
        expect(2, "group size must be 32, 64, 128 or -1 (per channel), got 48", "--model", m, "--method", "rtn", "--group-size", "48");
        // micro's attention rows are 64 columns: group 128 fits none of them, and the check comes before any stage runs
        CliRun misfit = report("--model", m, "--stages", "1,3", "--method", "rtn", "--group-size", "128");
        assertEquals(2, misfit.code(), misfit.toString());
        assertTrue(misfit.err().contains("stage 3: --bits 4 --group-size 128 do not fit this model"), misfit.err());
        assertTrue(misfit.err().contains("group sizes that fit at 4 bits: 32, 64"), misfit.err());
        assertFalse(misfit.err().contains("stage 1 of 2"), "fails before the baseline is measured:\n" + misfit.err());
        expect(2, "--runs must be an integer, got 'many'", "--model", m, "--runs", "many");
        expect(2, "--runs must be >= 1, got 0", "--model", m, "--runs", "0");
        expect(2, "--memory-budget must be bytes", "--model", m, "--memory-budget", "12XB");
        expect(2, "--max-kl must be a number", "--model", m, "--max-kl", "lots");
        expect(2, "--max-kl must be a number >= 0", "--model", m, "--max-kl", "-1");
        expect(2, "--max-ppl-increase needs --text", "--model", m, "--max-ppl-increase", "2");
        expect(2, "no such file", "--model", m, "--text", dir.resolve("missing.txt").toString());
        expect(2, "no such file", "--model", m, "--text", textDir.toString());
        expect(2, "exceed the model's context length 128", "--model", m, "--prompt-tokens", "100", "--gen-tokens", "100");
        expect(2, "--synthetic chooses the built-in model", "--model", m, "--synthetic", "micro");
        expect(2, "unknown --synthetic 'huge'", "--synthetic", "huge");
        expect(2, "unknown option --bogus", "--bogus", "1");
    }

    private static void expect(int code, String message, String... args) {
        CliRun r = CliRun.of(concat("report", args));
        assertEquals(code, r.code(), r.toString());
        assertTrue(r.err().contains(message), "expected '" + message + "' in\n" + r.err());
    }

    private static String[] concat(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    @Test
    void helpHasAnExample() {
        CliRun r = CliRun.of("report", "--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("example: modelopt report"), r.out());
        for (String o : List.of("--model", "--text", "--calib", "--stages", "--method", "--prompt-tokens", "--gen-tokens", "--runs", "--warmup",
                "--threads", "--out", "--memory-budget", "--max-ppl-increase", "--max-kl", "--require", "--quiet", "--json")) {
            assertTrue(r.out().contains(o), o);
        }
    }
}
