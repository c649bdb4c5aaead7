package io.modelopt.cli.command;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.cli.Main;
import io.modelopt.core.testing.Fixtures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code quantize} end to end: llama-quantize's bytes for a fixture, and its input errors. */
class QuantizeCommandTest {
    @TempDir Path dir;

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void writesLlamaQuantizesBytesAndRefusesToOverwrite() throws IOException {
        Path f32 = Fixtures.brownGguf("f32"), out = dir.resolve("q8_0.gguf");
        Result r = run("quantize", "--model", f32.toString(), "--method", "q8_0", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        assertArrayEquals(Files.readAllBytes(Fixtures.brownGguf("q8_0")), Files.readAllBytes(out), "llama-quantize f32 out Q8_0 2");
        Result again = run("quantize", "--model", f32.toString(), "--method", "q8_0", "--out", out.toString());
        assertEquals(2, again.code());
        assertTrue(again.err().contains("exists"), again.err());
    }

    @Test
    void badInputNamesTheProblemAndWritesNothing() throws IOException {
        Path f32 = Fixtures.brownGguf("f32"), out = dir.resolve("x.gguf");
        Result unknown = run("quantize", "--model", f32.toString(), "--method", "q9_k", "--out", out.toString());
        assertEquals(2, unknown.code());
        assertTrue(unknown.err().contains("unknown quantization preset 'q9_k'"), unknown.err());
        Result missing = run("quantize", "--model", dir.resolve("none.gguf").toString(), "--method", "q4_0", "--out", out.toString());
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("no such model file"), missing.err());
        Path corrupt = dir.resolve("corrupt.gguf");
        Files.write(corrupt, new byte[] {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1});
        Result bad = run("quantize", "--model", corrupt.toString(), "--method", "q4_0", "--out", out.toString());
        assertEquals(2, bad.code(), bad.err());
        Result quantizedInput = run("quantize", "--model", Fixtures.brownGguf("q4_0").toString(), "--method", "q4_k_m", "--out", out.toString());
        assertEquals(2, quantizedInput.code(), quantizedInput.err());
        assertTrue(quantizedInput.err().contains("requantizing"), quantizedInput.err());
        try (var files = Files.list(dir)) {
            assertFalse(files.anyMatch(p -> p.getFileName().toString().startsWith("x.gguf")), "no output or temporary file left");
        }
    }

    @Test
    void calibratedMethodsNameWhatIsMissingOrWrong() throws IOException {
        Path f32 = Fixtures.brownGguf("f32"), out = dir.resolve("g");
        Path text = Files.writeString(dir.resolve("calib.txt"), "The jury said.");
        Result noCalib = run("quantize", "--model", f32.toString(), "--method", "gptq", "--out", out.toString());
        assertEquals(2, noCalib.code());
        assertTrue(noCalib.err().contains("gptq needs calibration text: --calib FILE"), noCalib.err());
        Result damp = run("quantize", "--model", f32.toString(), "--method", "gptq", "--calib", text.toString(), "--damp", "0", "--out", out.toString());
        assertEquals(2, damp.code());
        assertTrue(damp.err().contains("damp must be positive"), damp.err());
        Result rtnCalib = run("quantize", "--model", f32.toString(), "--method", "rtn", "--calib", text.toString(), "--out", out.toString());
        assertEquals(2, rtnCalib.code());
        assertTrue(rtnCalib.err().contains("apply to the calibrated methods"), rtnCalib.err());
        Result tooShort = run("quantize", "--model", f32.toString(), "--method", "gptq", "--calib", text.toString(), "--format", "gptq", "--out", out.toString());
        assertEquals(2, tooShort.code());
        assertTrue(tooShort.err().matches("(?s).*calibration text too short: .* gave \\d+ tokens, one sample needs 256.*"), tooShort.err());
        assertFalse(Files.exists(out));
    }

    @Test
    void planShowsEachTensorsTargetAndTheFfnDownFallback() {
        Result r = run("quantize", "--model", Fixtures.storiesGguf("f32").toString(), "--method", "rtn", "--group-size", "32",
                "--override", "blk.0.*=INT8", "--keep", "blk.0.attn_q.weight", "--override", "blk.99.*=F16", "--plan");
        assertEquals(0, r.code(), r.err());
        String blk1Down = r.out().lines().filter(l -> l.contains("blk.1.ffn_down.weight")).findFirst().orElseThrow();
        assertTrue(blk1Down.contains("INT8_CHANNEL_SYM") && blk1Down.contains("fallback"), blk1Down);
        assertTrue(r.out().lines().anyMatch(l -> l.contains("blk.1.ffn_up.weight") && l.contains("INT4_G32_ASYM")), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.contains("blk.0.ffn_up.weight") && l.contains("INT8_CHANNEL_SYM")), r.out());
        // --keep after --override wins for the tensor it names: command-line order is rule order
        assertTrue(r.out().lines().anyMatch(l -> l.contains("blk.0.attn_q.weight") && l.contains("(F32)")), r.out());
        assertTrue(r.out().contains("pattern 'blk.99.*' matches no tensor"), r.out());
    }

    @Test
    void aGgufPresetWithRulesGoesThroughTheSpecAndRunsHere() throws IOException {
        Path out = dir.resolve("q8_0-rules.gguf");
        Result r = run("quantize", "--model", Fixtures.brownGguf("f32").toString(), "--method", "q8_0", "--override", "blk.0.ffn_*=Q4_0",
                "--keep", "blk.1.*", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        Result inspect = run("inspect", out.toString());
        assertEquals(0, inspect.code(), inspect.err());
        assertTrue(inspect.out().lines().anyMatch(l -> l.contains("blk.0.ffn_up.weight") && l.contains("Q4_0")), inspect.out());
        assertTrue(inspect.out().lines().anyMatch(l -> l.contains("blk.1.ffn_up.weight") && l.contains("F32")), inspect.out());
        assertTrue(inspect.out().lines().anyMatch(l -> l.contains("blk.2.ffn_up.weight") && l.contains("Q8_0")), inspect.out());
        assertTrue(inspect.out().contains("block linears"), inspect.out());
    }

    @Test
    void rtnRefusesWhatItsFormatCannotHoldAndUnknownFormats() throws IOException {
        Path out = dir.resolve("int4.gguf");
        Result gguf = run("quantize", "--model", Fixtures.brownGguf("f32").toString(), "--method", "rtn", "--format", "gguf", "--out", out.toString());
        assertEquals(2, gguf.code(), gguf.err());
        assertTrue(gguf.err().contains("INT4_G128_ASYM") && gguf.err().contains("compressed-tensors"), gguf.err());
        Result unknown = run("quantize", "--model", Fixtures.brownGguf("f32").toString(), "--method", "rtn", "--format", "onnx", "--out", out.toString());
        assertEquals(2, unknown.code(), unknown.err());
        assertTrue(unknown.err().contains("no exporter for format 'onnx'"), unknown.err());
        Result bits = run("quantize", "--model", Fixtures.brownGguf("f32").toString(), "--method", "q4_0", "--bits", "4", "--out", out.toString());
        assertEquals(2, bits.code(), bits.err());
        assertTrue(bits.err().contains("--method rtn"), bits.err());
        Result impossible = run("quantize", "--model", Fixtures.storiesGguf("f32").toString(), "--method", "rtn", "--override",
                "blk.0.ffn_down.weight=INT4_G32", "--plan");
        assertEquals(2, impossible.code(), impossible.err());
        assertTrue(impossible.err().contains("blk.0.ffn_down.weight"), impossible.err());
        try (var files = Files.list(dir)) {
            assertFalse(files.anyMatch(p -> p.getFileName().toString().startsWith("int4.gguf")), "no output or temporary file left");
        }
    }
}
