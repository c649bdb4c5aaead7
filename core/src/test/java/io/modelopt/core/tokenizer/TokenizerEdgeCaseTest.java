package io.modelopt.core.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hard inputs on the brown-llama vocabulary (byte fallback, split digits, no whitespace
 * collapsing). The tokenizer.json path follows HF tokenizers and the GGUF path follows
 * llama.cpp; they are independent implementations of two references that the fixture showed
 * to agree, so both must give the same ids, and the ids must have the expected shape.
 */
class TokenizerEdgeCaseTest {
    private static Tokenizer hf() { return TokenizerReferenceTest.tokenizer("brown-llama", "hf"); }
    private static Tokenizer gguf() { return TokenizerReferenceTest.tokenizer("brown-llama", "gguf"); }

    private static final String[] HARD = {
            "", " ", "   ", "\t", "\n", "\n\n\n", " \t \n ", "a  b   c    d", "trailing   ", "   leading",
            "line one\r\nline two\rthree", "tab\tseparated\tvalues\t", "1234567890", "3.14159 2,718 1e-9 0x1F",
            "café naïve", "cafe\u0301 nai\u0308ve", "Ελληνικά русский עברית العربية हिन्दी", "日本語 한국어 中文",
            "😀👍🏽👨‍👩‍👧", "\uD83D\uDE00 pair", "lone \uD800 surrogate", "zero\u200Bwidth\u00A0nbsp",
            "<s>", "</s>", "<unk>", "<s>Hello</s>", "a</s>b", "Hello <unk> world", "<s", "s>", "</s></s>",
            "▁already▁marked", "<0x0A>", "ALL CAPS", "mIxEd CaSe", "don't", "\u0000nul\u0001ctl", "\\backslash\\"};

    @Test
    void bothPathsAgreeOnHardInputs() {
        for (String s : HARD) {
            for (boolean addSpecial : new boolean[] {true, false}) {
                for (boolean parse : new boolean[] {true, false}) {
                    assertArrayEquals(hf().encode(s, addSpecial, parse), gguf().encode(s, addSpecial, parse),
                            "'" + s + "' addSpecial=" + addSpecial + " parseSpecial=" + parse);
                }
            }
        }
    }

    @Test
    void hardInputsDecodeBackToThemselves() {
        for (String s : HARD) {
            if (s.contains("\uD800")) continue; // an unpaired surrogate has no UTF-8 form; see loneSurrogate test
            if (s.contains("▁")) continue;      // a literal '▁' reads back as a space; see the test below
            assertEquals(s, hf().decode(hf().encode(s, true, false)), "hf round trip of '" + s + "'");
            assertEquals(s, gguf().decode(gguf().encode(s, true, false)), "gguf round trip of '" + s + "'");
        }
    }

    @Test
    void literalSpaceMarkReadsBackAsSpace() {
        // SentencePiece's known ambiguity, shared by HF's decoder and llama.cpp's detokenizer
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) assertEquals(" already marked", t.decode(t.encode("▁already▁marked")));
    }

    @Test
    void emptyStringIsJustBos() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            assertArrayEquals(new int[] {1}, t.encode(""));
            assertArrayEquals(new int[0], t.encode("", false, true));
            assertEquals("", t.decode(new int[0]));
            assertEquals("", t.decode(new int[] {1}));
        }
    }

    @Test
    void onlySpacesBecomeSpaceMarks() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            int[] ids = t.encode("    ", false, true);
            String joined = String.join("", Arrays.stream(ids).mapToObj(t::piece).toList());
            assertEquals("▁▁▁▁▁", joined, "dummy prefix + 4 spaces, none collapsed");
        }
    }

    @Test
    void charactersOutsideTheVocabularyFallBackToTheirUtf8Bytes() {
        // '😀' is a surrogate pair in Java: it must be one code point, F0 9F 98 80, not two
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            assertPieces(t, "😀", "▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>");
            assertPieces(t, "中", "▁", "<0xE4>", "<0xB8>", "<0xAD>");
            assertPieces(t, "\n", "▁", "<0x0A>");
            // a combining acute accent (U+0301) stays a separate character: not normalized to é
            int[] decomposed = t.encode("e\u0301", false, true);
            assertTrue(t.piece(decomposed[decomposed.length - 2]).equals("<0xCC>") && t.piece(decomposed[decomposed.length - 1]).equals("<0x81>"),
                    Arrays.toString(decomposed));
        }
    }

    @Test
    void loneSurrogateIsEncodedAsReplacementCharacter() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            assertPieces(t, "\uD800", "▁", "<0xEF>", "<0xBF>", "<0xBD>");
            assertEquals("\uFFFD", t.decode(t.encode("\uD800")));
        }
    }

    @Test
    void digitsAreSplitOneByOne() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            int[] ids = t.encode("1234567890", false, true);
            assertEquals(11, ids.length, "▁ + ten digits: " + Arrays.toString(ids));
            for (int i = 1; i < ids.length; i++) assertEquals(String.valueOf("1234567890".charAt(i - 1)), t.piece(ids[i]));
        }
    }

    @Test
    void specialTokenStringsAreParsedOnlyWhenAsked() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            int[] hello = t.encode("Hello", false, true);
            int[] parsed = t.encode("<s>Hello</s>");
            int[] expected = IntStream.concat(IntStream.of(1, 1), IntStream.concat(Arrays.stream(hello), IntStream.of(2))).toArray();
            assertArrayEquals(expected, parsed, "the text after a special token gets the dummy prefix again");
            int[] literal = t.encode("<s>Hello</s>", true, false);
            assertEquals(1, literal[0]);
            assertTrue(Arrays.stream(literal).skip(1).noneMatch(id -> id == 1 || id == 2), Arrays.toString(literal));
            assertEquals("<s>Hello</s>", t.decode(literal));
            // rendering specials: the first piece is "<s>", so no space is stripped after it
            assertEquals("<s> Hello</s>", t.decode(parsed, false).substring(3));
            assertEquals("Hello", t.decode(parsed));
            assertTrue(t.isSpecial(1) && t.isSpecial(2) && !t.isSpecial(hello[0]));
        }
    }

    @Test
    void unknownTokenIsParsedAsSpecialToo() {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            int[] ids = t.encode("a<unk>b");
            assertTrue(Arrays.stream(ids).anyMatch(id -> id == 0), Arrays.toString(ids));
            assertFalse(Arrays.stream(t.encode("a<unk>b", true, false)).anyMatch(id -> id == 0));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"Hello world", "café 😀 中文\n\tend", "  two leading, trailing  "})
    void tokenBytesStreamTheText(String s) {
        for (Tokenizer t : new Tokenizer[] {hf(), gguf()}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int id : t.encode(s)) out.writeBytes(t.tokenBytes(id));
            assertEquals(" " + s, out.toString(StandardCharsets.UTF_8), "BOS gives nothing, the dummy prefix stays");
        }
    }

    @Test
    void vocabularyAccessorsAgree() {
        Tokenizer h = hf(), g = gguf();
        assertEquals(4096, h.vocabSize());
        assertEquals(4096, g.vocabSize());
        for (int id = 0; id < 4096; id++) {
            assertEquals(h.piece(id), g.piece(id), "piece " + id);
            assertEquals(id, g.idOf(g.piece(id)));
            assertEquals(id, h.idOf(h.piece(id)));
        }
        assertEquals(-1, g.idOf("no such piece"));
        assertEquals(1, h.bosId());
        assertEquals(2, h.eosId());
        assertEquals(1, g.bosId());
        assertEquals(2, g.eosId());
        assertTrue(h.addsBos() && g.addsBos());
        assertTrue(g.describe().contains("4096"), g.describe());
        assertTrue(h.describe().contains("4096"), h.describe());
    }

    private static void assertPieces(Tokenizer t, String text, String... pieces) {
        int[] ids = t.encode(text, false, true);
        assertEquals(Arrays.asList(pieces), Arrays.stream(ids).mapToObj(t::piece).toList(), "pieces of '" + text + "'");
    }
}
