package io.modelopt.core.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {
    @Test
    void parsesAllValueKinds() {
        Map<String, Object> m = Json.parseObject("{\"a\":1,\"b\":-2.5e3,\"c\":\"x\\u00e9\\n\\\"\",\"d\":[true,false,null],\"e\":{},\"f\":[]," +
                "\"big\":123456789012345678901234567890,\"long\":9007199254740993}");
        assertEquals(1L, m.get("a"));
        assertEquals(-2500.0, m.get("b"));
        assertEquals("xé\n\"", m.get("c"));
        assertEquals(java.util.Arrays.asList(true, false, null), m.get("d"));
        assertEquals(Map.of(), m.get("e"));
        assertEquals(List.of(), m.get("f"));
        assertEquals(new BigDecimal("123456789012345678901234567890"), m.get("big"));
        assertEquals(9007199254740993L, m.get("long"));
        assertEquals(List.of("a", "b", "c", "d", "e", "f", "big", "long"), List.copyOf(m.keySet()), "key order kept");
    }

    @Test
    void surrogatePairsAndUnicodePassThrough() {
        assertEquals("😀▁é", Json.parse("\"\\ud83d\\ude00▁é\""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "[1,]", "{\"a\" 1}", "{\"a\":}", "\"abc", "01", "1.", "-", "tru", "[1 2]", "{\"a\":1,}", "\"\\x\"", "\"\\u12\"", "\"a\u0001\"", "1 2"})
    void rejectsMalformedInputWithOffset(String text) {
        JsonException e = assertThrows(JsonException.class, () -> Json.parse(text));
        assertTrue(e.getMessage().contains("at character"), e.getMessage());
    }

    @Test
    void deepNestingIsAnErrorNotAStackOverflow() {
        String deep = "[".repeat(100_000);
        assertThrows(JsonException.class, () -> Json.parse(deep));
    }

    @Test
    void writeThenParseRoundTrips() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("s", "tab\tquote\"back\\ctl\u0002");
        m.put("n", 42L);
        m.put("d", 0.1);
        m.put("whole", 3.0);
        m.put("l", List.of(1L, "two", List.of()));
        m.put("nil", null);
        for (String text : List.of(Json.write(m), Json.writePretty(m))) {
            assertEquals(m, Json.parse(text));
        }
        assertInstanceOf(Double.class, Json.parse(Json.write(3.0)));
    }
}
