package io.modelopt.core.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Byte-level BPE on a small synthetic GPT-2-style vocabulary (the 256 byte characters plus a few
 * merges): GPT-2's byte alphabet, the GPT-2 / Llama-3 / Qwen2 pre-tokenizer splits as the
 * published tokenizers make them, rank-ordered merging, added tokens, and the tokenizer.json and
 * GGUF ({@code tokenizer.ggml.model = gpt2}) paths giving the same ids.
 */
class ByteLevelBpeTest {
    /** The pre-tokenizer patterns exactly as the published tokenizer.json files spell them. */
    static final String LLAMA3_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static final String QWEN2_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    static final List<String> MERGES = List.of("Ġ t", "h e", "Ġt he", "l l", "e ll", "H ell", "Hell o", "Ġ w", "o r",
            "Ġw or", "Ġwor l", "Ġworl d", "a b", "b a", "ab ab", "Ġ Ġ", "ĠĠ ĠĠ", "1 2", "12 3", "Ċ Ċ");
    static final String EOT = "<|endoftext|>";

    @TempDir Path tmp;

    // ---------------------------------------------------------------- byte alphabet

    @Test
    void byteAlphabetIsGpt2s() {
        Set<Character> seen = new HashSet<>();
        for (int b = 0; b < 256; b++) {
            char c = ByteLevelAlphabet.charOf(b);
            assertTrue(seen.add(c), "distinct for byte " + b);
            assertEquals(b, ByteLevelAlphabet.byteOf(c));
        }
        assertEquals('Ġ', ByteLevelAlphabet.charOf(' '));
        assertEquals('\u0120', ByteLevelAlphabet.charOf(' '));
        assertEquals('Ċ', ByteLevelAlphabet.charOf('\n'));
        assertEquals('ĉ', ByteLevelAlphabet.charOf('\t'));
        assertEquals('Ā', ByteLevelAlphabet.charOf(0));
        assertEquals('A', ByteLevelAlphabet.charOf('A'));
        assertEquals('~', ByteLevelAlphabet.charOf('~'));
        assertEquals('ġ', ByteLevelAlphabet.charOf(0x7F));   // 127..160 continue after the 33 control/space bytes
        assertEquals('¡', ByteLevelAlphabet.charOf(0xA1));
        assertEquals('Ń', ByteLevelAlphabet.charOf(0xAD));   // the soft hyphen is the 68th and last remapped byte
        assertEquals('ÿ', ByteLevelAlphabet.charOf(0xFF));
        assertEquals(-1, ByteLevelAlphabet.byteOf('€'));
        String text = "héllo wörld 😀 中文\n\t";
        String encoded = ByteLevelAlphabet.encode(text);
        assertEquals("hÃ©lloĠwÃ¶rldĠðŁĺĢĠä¸ŃæĸĩĊĉ", encoded);
        assertEquals(text, new String(ByteLevelAlphabet.decodeOrNull(encoded), StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- pre-tokenizer splits

    private static List<String> split(Pattern p, String s) {
        return RegexSplitter.split(s, p, null, SplitBehavior.ISOLATED, false);
    }

    @Test
    void gpt2PatternSplitsAsGpt2Does() {
        Pattern p = HfPreTokenizer.GPT2_PATTERN;
        assertEquals(List.of("Hello", " world", "'s", " 123"), split(p, "Hello world's 123"));
        assertEquals(List.of(" ", " spaces", " ", " here", "  "), split(p, "  spaces  here  "));
        assertEquals(List.of("I", "'", "M", " fine", "!!!", "\n\n"), split(p, "I'M fine!!!\n\n"));
        assertEquals(List.of("we", "'ll", " see", ",", " you", "'re", " 42", "nd"), split(p, "we'll see, you're 42nd"));
        assertEquals(List.of("\u00A0", "x"), split(p, "\u00A0x"), "a no-break space is whitespace (Unicode \\s)");
        assertEquals(List.of("日本語", " テスト"), split(p, "日本語 テスト"));
        // the pieces of the GPT-2 byte-level pre-tokenizer, in the byte alphabet
        var pieces = new HfPreTokenizer.ByteLevel(false, true).apply(List.of(new HfPreTokenizer.Piece("Hello world's 123", true)));
        assertEquals(List.of("Hello", "Ġworld", "'s", "Ġ123"), pieces.stream().map(HfPreTokenizer.Piece::text).toList());
        var prefixed = new HfPreTokenizer.ByteLevel(true, true).apply(List.of(new HfPreTokenizer.Piece("Hello", true)));
        assertEquals(List.of("ĠHello"), prefixed.stream().map(HfPreTokenizer.Piece::text).toList());
    }

    @Test
    void llama3PatternSplitsAsTiktokenDoes() {
        Pattern p = RegexDialect.compile(LLAMA3_REGEX);
        assertEquals(List.of("Hello", " world", "'s", " ", "123", "456"), split(p, "Hello world's 123456"));
        assertEquals(List.of("IT", "'S", " DON", "'T"), split(p, "IT'S DON'T"), "(?i:...) contractions");
        assertEquals(List.of("line", "\n\n", "next"), split(p, "line\n\nnext"));
        assertEquals(List.of("a", "  \n", " b"), split(p, "a  \n b"));
        assertEquals(List.of("x", " +=", " y", ";\n"), split(p, "x += y;\n"));
        assertEquals(List.of("$", "100", "000"), split(p, "$100000"));
        // llama.cpp's adapted spelling means the same
        LlamaCppPreTokenizer cpp = LlamaCppPreTokenizer.forName("llama-bpe");
        for (String s : HARD) assertEquals(split(p, s), cpp.split(s), "llama-bpe on '" + s + "'");
    }

    @Test
    void qwen2PatternSplitsDigitsOneByOne() {
        Pattern p = RegexDialect.compile(QWEN2_REGEX);
        assertEquals(List.of("abc", " ", "1", "2", "3", "4"), split(p, "abc 1234"));
        LlamaCppPreTokenizer cpp = LlamaCppPreTokenizer.forName("qwen2");
        for (String s : HARD) assertEquals(split(p, s), cpp.split(s), "qwen2 on '" + s + "'");
    }

    @Test
    void splitBehaviorsMatchHfDocumentation() {
        String s = "the-final--countdown";
        assertEquals(List.of("the", "final", "countdown"), RegexSplitter.split(s, null, "-", SplitBehavior.REMOVED, false));
        assertEquals(List.of("the", "-", "final", "-", "-", "countdown"), RegexSplitter.split(s, null, "-", SplitBehavior.ISOLATED, false));
        assertEquals(List.of("the-", "final-", "-", "countdown"), RegexSplitter.split(s, null, "-", SplitBehavior.MERGED_WITH_PREVIOUS, false));
        assertEquals(List.of("the", "-final", "-", "-countdown"), RegexSplitter.split(s, null, "-", SplitBehavior.MERGED_WITH_NEXT, false));
        assertEquals(List.of("the", "-", "final", "--", "countdown"), RegexSplitter.split(s, null, "-", SplitBehavior.CONTIGUOUS, false));
        assertEquals(List.of("-", "-", "-"), RegexSplitter.split(s, null, "-", SplitBehavior.REMOVED, true), "inverted: the matches are kept");
    }

    @Test
    void metaspaceSplitsLikeHf() {
        var ms = new HfPreTokenizer.Metaspace('▁', HfPreTokenizer.PrependScheme.ALWAYS, true);
        assertEquals(List.of("▁Hey", "▁", "▁", "▁friend!"),
                ms.apply(List.of(new HfPreTokenizer.Piece("Hey   friend!", true))).stream().map(HfPreTokenizer.Piece::text).toList());
        var first = new HfPreTokenizer.Metaspace('▁', HfPreTokenizer.PrependScheme.FIRST, false);
        assertEquals(List.of("▁Hey▁", "how"), first.apply(List.of(new HfPreTokenizer.Piece(" Hey ", true), new HfPreTokenizer.Piece("how", false)))
                .stream().map(HfPreTokenizer.Piece::text).toList());
        assertEquals(List.of("Hey", " friend!"), new HfDecoder.Metaspace('▁', true).decodeChain(List.of("▁Hey", "▁friend!")));
        assertEquals(List.of(" Hey", " friend!"), new HfDecoder.Metaspace('▁', false).decodeChain(List.of("▁Hey", "▁friend!")));
    }

    // ---------------------------------------------------------------- BPE through tokenizer.json

    static final String[] HARD = {"", " ", "Hello world", "Hello world's 123", "  spaces  here  ", "the", " the", "ababa",
            "I'M fine!!!\n\n", "tabs\tand\ttabs", "a\t\tb", "trailing \t", "line\r\nbreak", "héllo wörld 😀 中文\n\t",
            "IT'S 1234567", "\u00A0nbsp\u3000ideographic", "e\u0301", "<|endoftext|>", "Hello<|endoftext|> the", "x += y;\n"};

    @Test
    void mergesApplyByRankLeftmostFirst() throws IOException {
        Tokenizer t = Tokenizers.fromHuggingFace(write("gpt2", gpt2TokenizerJson(false, false, "gpt2"), null));
        assertPieces(t, "Hello world", "Hello", "Ġworld");
        assertPieces(t, " the", "Ġthe");
        assertPieces(t, "the", "t", "he");
        assertPieces(t, "ababa", "abab", "a");         // ab (rank 12) at 0 before ba (13); then ab at 2; then abab
        assertPieces(t, "    x", "ĠĠ", "Ġ", "Ġ", "x");  // \s+(?!\S) leaves the last space to " x"; no merge makes "ĠĠĠ" or "Ġx"
        assertPieces(t, "a        ", "a", "ĠĠĠĠ", "ĠĠĠĠ"); // "Ġ Ġ" leftmost first four times, then "ĠĠ ĠĠ" twice
        assertPieces(t, "1234", "123", "4");
        assertEquals(0, t.encode("").length, "no post-processor BOS");
    }

    @Test
    void pairStyleMergesGiveTheSameIds() throws IOException {
        Tokenizer strings = Tokenizers.fromHuggingFace(write("s", gpt2TokenizerJson(false, false, "gpt2"), null));
        Tokenizer pairs = Tokenizers.fromHuggingFace(write("p", gpt2TokenizerJson(true, false, "gpt2"), null));
        for (String s : HARD) assertArrayEquals(strings.encode(s), pairs.encode(s), s);
    }

    @Test
    void byteLevelRoundTripsAnyText() throws IOException {
        for (String pre : List.of("gpt2", "llama3", "qwen2")) {
            Tokenizer t = Tokenizers.fromHuggingFace(write(pre, gpt2TokenizerJson(false, false, pre), null));
            for (String s : HARD) {
                // Qwen2's tokenizer.json normalizes to NFC: a decomposed "e\u0301" comes back composed
                String expected = pre.equals("qwen2") ? java.text.Normalizer.normalize(s, java.text.Normalizer.Form.NFC) : s;
                assertEquals(expected, t.decode(t.encode(s, true, false)), pre + ": '" + s + "'");
            }
            StringBuilder streamed = new StringBuilder();
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            for (int id : t.encode("héllo 😀", true, true)) bytes.writeBytes(t.tokenBytes(id));
            streamed.append(bytes.toString(StandardCharsets.UTF_8));
            assertEquals("héllo 😀", streamed.toString());
        }
    }

    @Test
    void addedSpecialTokenIsMatchedOnlyWhenParsing() throws IOException {
        Tokenizer t = Tokenizers.fromHuggingFace(write("gpt2", gpt2TokenizerJson(false, false, "gpt2"), null));
        int eot = t.idOf(EOT);
        assertTrue(eot > 0);
        assertPieces(t, "Hello<|endoftext|> the", "Hello", EOT, "Ġthe");
        int[] literal = t.encode("Hello<|endoftext|> the", true, false);
        assertFalse(Arrays.stream(literal).anyMatch(id -> id == eot));
        assertEquals("Hello<|endoftext|> the", t.decode(literal));
        int[] parsed = t.encode("Hello<|endoftext|> the");
        assertEquals("Hello the", t.decode(parsed));
        assertEquals("Hello<|endoftext|> the", t.decode(parsed, false));
        assertTrue(t.isSpecial(eot));
        assertEquals(0, t.tokenBytes(eot).length);
    }

    @Test
    void ignoreMergesEmitsWholeWordsThatAreTokens() throws IOException {
        Tokenizer with = Tokenizers.fromHuggingFace(write("with", gpt2TokenizerJson(false, true, "llama3"), null));
        Tokenizer without = Tokenizers.fromHuggingFace(write("without", gpt2TokenizerJson(false, false, "llama3"), null));
        assertPieces(with, "xyz", "xyz");
        assertPieces(without, "xyz", "x", "y", "z");
    }

    @Test
    void templateProcessingAddsBos() throws IOException {
        Map<String, Object> json = gpt2TokenizerJson(false, true, "llama3");
        int eot = ((List<?>) json.get("added_tokens")).size() == 1 ? vocabulary().size() : -1;
        json.put("post_processor", Map.of("type", "Sequence", "processors", List.of(
                Map.of("type", "ByteLevel", "add_prefix_space", false, "trim_offsets", true, "use_regex", true),
                Map.of("type", "TemplateProcessing",
                        "single", List.of(Map.of("SpecialToken", Map.of("id", EOT, "type_id", 0)), Map.of("Sequence", Map.of("id", "A", "type_id", 0))),
                        "pair", List.of(),
                        "special_tokens", Map.of(EOT, Map.of("id", EOT, "ids", List.of(eot), "tokens", List.of(EOT)))))));
        Tokenizer t = Tokenizers.fromHuggingFace(write("tpl", json, null));
        assertArrayEquals(new int[] {eot}, t.encode(""));
        assertEquals(eot, t.encode("Hello")[0]);
        assertTrue(t.addsBos());
        // tokenizer_config.json's add_bos_token wins over the template, as in LlamaTokenizerFast
        Tokenizer noBos = Tokenizers.fromHuggingFace(write("tpl2", json, Map.of("add_bos_token", false, "bos_token", EOT)));
        assertEquals(0, noBos.encode("").length);
        assertFalse(noBos.addsBos());
    }

    // ---------------------------------------------------------------- the GGUF path on the same vocabulary

    @Test
    void ggufGpt2VocabularyGivesTheSameIdsAsTokenizerJson() throws IOException {
        for (String[] pair : new String[][] {{"gpt-2", "gpt2"}, {"llama-bpe", "llama3"}, {"qwen2", "qwen2"}}) {
            boolean ignore = pair[0].equals("llama-bpe"); // llama.cpp sets ignore_merges for llama3, as Llama 3's tokenizer.json does
            Tokenizer hf = Tokenizers.fromHuggingFace(write(pair[1], gpt2TokenizerJson(false, ignore, pair[1]), null));
            Tokenizer gguf = Tokenizers.fromGguf(ggufVocabulary(pair[0]));
            for (String s : HARD) {
                // llama.cpp does not apply tokenizer.json's NFC normalizer (Qwen2): the paths agree on NFC text only
                if (pair[1].equals("qwen2") && !java.text.Normalizer.isNormalized(s, java.text.Normalizer.Form.NFC)) continue;
                assertArrayEquals(hf.encode(s, false, true), gguf.encode(s, false, true), pair[0] + ": '" + s + "'");
                assertArrayEquals(hf.encode(s, false, false), gguf.encode(s, false, false), pair[0] + " literal: '" + s + "'");
            }
        }
    }

    @Test
    void ggufBpeDetokenizerCleansSpacesOnlyWhereLlamaCppDoes() {
        Tokenizer gpt2 = Tokenizers.fromGguf(ggufVocabulary("gpt-2"));
        assertEquals("Hello, world. it's", gpt2.decode(gpt2.encode("Hello , world . it 's")));
        Tokenizer qwen = Tokenizers.fromGguf(ggufVocabulary("qwen2"));
        assertEquals("Hello , world . it 's", qwen.decode(qwen.encode("Hello , world . it 's")));
        assertEquals("héllo 😀\n", qwen.decode(qwen.encode("héllo 😀\n")));
    }

    @Test
    void ggufRefusesWhatLlamaCppRefuses() {
        GgufVocabulary v = ggufVocabulary("gpt-2");
        var unknownPre = new GgufVocabulary("gpt2", "no-such-pre", v.tokens(), null, v.tokenTypes(), v.merges(), -1, -1, -1, -1, false, false, null);
        assertTrue(assertThrows(ModelFormatException.class, () -> Tokenizers.fromGguf(unknownPre)).getMessage().contains("no-such-pre"));
        var t5 = new GgufVocabulary("t5", null, v.tokens(), null, null, null, -1, -1, -1, -1, null, null, null);
        assertTrue(assertThrows(ModelFormatException.class, () -> Tokenizers.fromGguf(t5)).getMessage().contains("t5"));
        var noMerges = new GgufVocabulary("gpt2", "gpt-2", v.tokens(), null, null, null, -1, -1, -1, -1, false, false, null);
        assertTrue(assertThrows(ModelFormatException.class, () -> Tokenizers.fromGguf(noMerges)).getMessage().contains("merges"));
        var bosMissing = new GgufVocabulary("gpt2", "gpt-2", v.tokens().subList(0, 5), null, null, v.merges(), -1, -1, -1, -1, true, false, null);
        assertThrows(ModelFormatException.class, () -> Tokenizers.fromGguf(bosMissing));
    }

    // ---------------------------------------------------------------- refusing what is not implemented

    @Test
    void unsupportedModelTypesAreRefusedNamingFileAndType() throws IOException {
        for (String type : List.of("WordPiece", "Unigram", "WordLevel")) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("model", Map.of("type", type, "vocab", Map.of("a", 0)));
            Path dir = write(type, json, null);
            ModelFormatException e = assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(dir));
            assertTrue(e.getMessage().contains(type) && e.getMessage().contains(dir.resolve("tokenizer.json").toString()), e.getMessage());
            assertEquals(dir.resolve("tokenizer.json"), e.file());
        }
    }

    @Test
    void malformedFilesAreRefusedWithTheirJsonPath() throws IOException {
        Map<String, Object> badMerge = gpt2TokenizerJson(false, false, "gpt2");
        ((Map<String, Object>) badMerge.get("model")).put("merges", List.of("Ġ t", "q? z"));
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(write("m", badMerge, null)));
        assertTrue(e.getMessage().contains("model.merges[1]") && e.getMessage().contains("q?"), e.getMessage());

        Map<String, Object> badRegex = gpt2TokenizerJson(false, false, "gpt2");
        badRegex.put("pre_tokenizer", Map.of("type", "Split", "pattern", Map.of("Regex", "(unclosed"), "behavior", "Isolated", "invert", false));
        e = assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(write("r", badRegex, null)));
        assertTrue(e.getMessage().contains("pre_tokenizer.pattern.Regex"), e.getMessage());

        Map<String, Object> badNorm = gpt2TokenizerJson(false, false, "gpt2");
        badNorm.put("normalizer", Map.of("type", "BertNormalizer"));
        e = assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(write("n", badNorm, null)));
        assertTrue(e.getMessage().contains("BertNormalizer"), e.getMessage());

        Path notJson = Files.createDirectories(tmp.resolve("notjson"));
        Files.writeString(notJson.resolve("tokenizer.json"), "{\"model\": ");
        assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(notJson));
        assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(tmp.resolve("missing")));
    }

    // ---------------------------------------------------------------- fixtures of this test

    private static void assertPieces(Tokenizer t, String text, String... pieces) {
        int[] ids = t.encode(text);
        assertEquals(Arrays.asList(pieces), Arrays.stream(ids).mapToObj(t::piece).toList(), "pieces of '" + text + "'");
    }

    /** The 256 byte characters in byte order, then each merge's result, then "xyz" (a token no merge builds). */
    static List<String> vocabulary() {
        List<String> v = new ArrayList<>();
        for (int b = 0; b < 256; b++) v.add(String.valueOf(ByteLevelAlphabet.charOf(b)));
        for (String m : MERGES) {
            String r = m.replace(" ", "");
            if (!v.contains(r)) v.add(r);
        }
        v.add("xyz");
        return v;
    }

    static Map<String, Object> gpt2TokenizerJson(boolean pairMerges, boolean ignoreMerges, String pre) {
        List<String> vocab = vocabulary();
        Map<String, Object> vocabJson = new LinkedHashMap<>();
        for (int i = 0; i < vocab.size(); i++) vocabJson.put(vocab.get(i), i);
        Map<String, Object> model = new LinkedHashMap<>();
        model.put("type", "BPE");
        model.put("dropout", null);
        model.put("unk_token", null);
        model.put("continuing_subword_prefix", "");
        model.put("end_of_word_suffix", "");
        model.put("fuse_unk", false);
        model.put("byte_fallback", false);
        model.put("ignore_merges", ignoreMerges);
        model.put("vocab", vocabJson);
        model.put("merges", pairMerges ? MERGES.stream().map(m -> List.of(m.split(" "))).toList() : MERGES);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("version", "1.0");
        json.put("added_tokens", List.of(Map.of("id", vocab.size(), "content", EOT, "single_word", false, "lstrip", false,
                "rstrip", false, "normalized", false, "special", true)));
        Map<String, Object> byteLevelNoRegex = Map.of("type", "ByteLevel", "add_prefix_space", false, "trim_offsets", true, "use_regex", false);
        switch (pre) {
            case "gpt2" -> json.put("pre_tokenizer", Map.of("type", "ByteLevel", "add_prefix_space", false, "trim_offsets", true, "use_regex", true));
            case "llama3" -> json.put("pre_tokenizer", Map.of("type", "Sequence", "pretokenizers", List.of(
                    Map.of("type", "Split", "pattern", Map.of("Regex", LLAMA3_REGEX), "behavior", "Isolated", "invert", false), byteLevelNoRegex)));
            case "qwen2" -> {
                json.put("normalizer", Map.of("type", "NFC"));
                json.put("pre_tokenizer", Map.of("type", "Sequence", "pretokenizers", List.of(
                        Map.of("type", "Split", "pattern", Map.of("Regex", QWEN2_REGEX), "behavior", "Isolated", "invert", false), byteLevelNoRegex)));
            }
            default -> throw new IllegalArgumentException(pre);
        }
        json.put("post_processor", Map.of("type", "ByteLevel", "add_prefix_space", false, "trim_offsets", false, "use_regex", false));
        json.put("decoder", Map.of("type", "ByteLevel", "add_prefix_space", true, "trim_offsets", true, "use_regex", true));
        json.put("model", model);
        return json;
    }

    static GgufVocabulary ggufVocabulary(String pre) {
        List<String> tokens = new ArrayList<>(vocabulary());
        tokens.add(EOT);
        int[] types = new int[tokens.size()];
        Arrays.fill(types, 1);
        types[tokens.size() - 1] = 3;
        return new GgufVocabulary("gpt2", pre, tokens, null, types, MERGES, tokens.size() - 1, tokens.size() - 1, -1, -1,
                false, false, null);
    }

    private Path write(String name, Map<String, Object> tokenizerJson, Map<String, Object> config) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        Files.writeString(dir.resolve("tokenizer.json"), Json.write(tokenizerJson));
        if (config != null) Files.writeString(dir.resolve("tokenizer_config.json"), Json.write(config));
        return dir;
    }
}
