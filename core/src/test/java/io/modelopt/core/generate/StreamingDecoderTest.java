package io.modelopt.core.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StreamingDecoderTest {
    private static final FakeTokenizer TOK = new FakeTokenizer("▁hello", "▁world");

    @Test
    void holdsBackOnlyAnUnfinishedCharacter() {
        byte[] b = "a€😀".getBytes(StandardCharsets.UTF_8); // 1 + 3 + 4 bytes
        for (int n = 0; n <= b.length; n++) {
            int expected = n <= 1 ? n : n < 4 ? 1 : n < 8 ? 4 : 8;
            assertEquals(expected, StreamingDecoder.completePrefix(b, n), "prefix of " + n + " bytes");
        }
        // malformed: a stray continuation byte or a lead byte followed by ASCII is not held back
        assertEquals(2, StreamingDecoder.completePrefix(new byte[] {'a', (byte) 0x82}, 2));
        assertEquals(2, StreamingDecoder.completePrefix(new byte[] {(byte) 0xE2, 'x'}, 2));
    }

    @Test
    void decodesTokensToWholeCharacters() {
        StreamingDecoder d = new StreamingDecoder(TOK, false);
        StringBuilder out = new StringBuilder();
        int[] ids = {TOK.idOf("▁hello"), TOK.byteToken(0xF0), TOK.byteToken(0x9F), TOK.byteToken(0x98), TOK.byteToken(0x80), FakeTokenizer.BOS, TOK.idOf("▁world")};
        String[] expect = {" hello", "", "", "", "😀", "", " world"};
        for (int i = 0; i < ids.length; i++) {
            String s = d.push(ids[i]);
            assertEquals(expect[i], s, "after token " + i);
            out.append(s);
        }
        assertEquals("", d.flush());
        assertEquals(TOK.decode(ids, true).length() + 1, out.length()); // decode strips the leading space
        assertEquals(" " + TOK.decode(ids, true), out.toString());
    }

    @Test
    void stripsTheLeadingSpaceAtTheStartOfAWholeTextOnly() {
        StreamingDecoder start = new StreamingDecoder(TOK, true);
        assertEquals("", start.push(FakeTokenizer.BOS)); // special: no text, does not count as the first text
        assertEquals("hello", start.push(TOK.idOf("▁hello")));
        assertEquals(" world", start.push(TOK.idOf("▁world")));
        StreamingDecoder byteStart = new StreamingDecoder(TOK, true);
        assertEquals("", byteStart.push(TOK.byteToken(' '))); // a space byte token is the text's leading space too
        assertEquals(" world", byteStart.push(TOK.idOf("▁world")));
    }

    @Test
    void stopFilterHoldsBackPossibleStarts() {
        StopStringFilter f = new StopStringFilter(java.util.List.of("aab", "xy"));
        assertEquals("", f.push("a"));
        assertEquals("", f.push("a"));
        assertEquals("a", f.push("a"));    // "aaa": "aa" may still start "aab"
        assertEquals("aaa", f.push("ax")); // "aaax": only "x" may still start "xy"
        assertEquals("", f.push(""));
        assertEquals("x", f.flush());
        assertEquals("b", f.push("b"));
        assertEquals("x", f.push("xaa"));  // "aa" may start "aab"
        assertEquals("", f.push("bx"));    // "aabx": the stop string starts the held text
        assertTrue(f.stopped());
        assertEquals("", f.push("more"));
    }
}
