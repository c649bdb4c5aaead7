package io.modelopt.core.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The brown-llama tokenizer.json rewritten into the other spellings real SentencePiece-derived
 * tokenizers use (a Metaspace pre-tokenizer instead of the Prepend/Replace normalizer, as in
 * non-legacy Llama/Mistral files), and with tokenizer_config.json variations; the reference ids
 * must still come out where the spellings are equivalent.
 */
class HfTokenizerVariantsTest {
    @TempDir Path tmp;

    private Path variant(String name, Map<String, Object> edits, Map<String, Object> config) throws IOException {
        Path src = Fixtures.brownHf();
        Map<String, Object> json = Json.parseObject(Files.readString(src.resolve("tokenizer.json")));
        json.putAll(edits);
        Path dir = Files.createDirectories(tmp.resolve(name));
        Files.writeString(dir.resolve("tokenizer.json"), Json.write(json));
        if (config != null) Files.writeString(dir.resolve("tokenizer_config.json"), Json.write(config));
        else Files.copy(src.resolve("tokenizer_config.json"), dir.resolve("tokenizer_config.json"));
        return dir;
    }

    private static Map<String, Object> metaspace(String scheme, boolean split) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("normalizer", null);
        m.put("pre_tokenizer", Map.of("type", "Metaspace", "replacement", "▁", "prepend_scheme", scheme, "split", split));
        return m;
    }

    @Test
    void metaspacePreTokenizerGivesTheReferenceIds() throws IOException {
        List<TokenizerReferenceTest.Ref> refs = TokenizerReferenceTest.references("brown-llama");
        for (var v : List.of(metaspace("first", false), metaspace("always", false), metaspace("always", true))) {
            Tokenizer t = Tokenizers.fromHuggingFace(variant("ms" + v.hashCode(), v, null));
            int compared = 0;
            for (var r : refs) {
                // equivalent except where Metaspace differs on purpose: text that already starts with a space
                // gets no second '▁'; with split, runs of spaces cannot merge into "▁▁" pieces
                if (r.text().startsWith(" ") || r.text().contains("  ")) continue;
                assertArrayEquals(r.ids(), t.encode(r.text()), v + ": " + r.text());
                compared++;
            }
            assertTrue(compared >= 190, "compared " + compared);
            assertNotEquals(TokenizerReferenceTest.tokenizer("brown-llama", "hf").encode(" x").length, t.encode(" x").length,
                    "no dummy prefix on text that starts with a space");
        }
    }

    @Test
    void prependSchemeFirstOnlyPrefixesTheStartOfTheInput() throws IOException {
        Tokenizer first = Tokenizers.fromHuggingFace(variant("first", metaspace("first", false), null));
        Tokenizer always = Tokenizers.fromHuggingFace(variant("always", metaspace("always", false), null));
        int[] f = first.encode("a</s>b"), a = always.encode("a</s>b");
        assertEquals("b", first.piece(f[f.length - 1]), "no '▁' after the special token with prepend_scheme first");
        assertEquals("▁b", always.piece(a[a.length - 1]));
    }

    @Test
    void tokenizerConfigDecidesBosAndEos() throws IOException {
        Map<String, Object> none = Map.of();
        Tokenizer eos = Tokenizers.fromHuggingFace(variant("eos", none,
                Map.of("add_bos_token", true, "add_eos_token", true, "bos_token", "<s>", "eos_token", Map.of("content", "</s>", "__type", "AddedToken"))));
        int[] ids = eos.encode("Hello");
        assertEquals(1, ids[0]);
        assertEquals(2, ids[ids.length - 1]);
        Tokenizer noBos = Tokenizers.fromHuggingFace(variant("nobos", none, Map.of("add_bos_token", false, "bos_token", "<s>")));
        assertFalse(noBos.addsBos());
        assertArrayEquals(new int[0], noBos.encode(""));
        assertEquals(1, noBos.bosId());
        // without tokenizer_config.json the post-processor's template applies
        Path bare = variant("bare", none, Map.of());
        Files.delete(bare.resolve("tokenizer_config.json"));
        assertArrayEquals(new int[] {1}, Tokenizers.fromHuggingFace(bare).encode(""));
        // asking for a BOS that is not a token is an error naming tokenizer_config.json
        ModelFormatException e = assertThrows(ModelFormatException.class, () -> Tokenizers.fromHuggingFace(
                variant("badbos", none, Map.of("add_bos_token", true, "bos_token", "<nope>"))));
        assertTrue(e.getMessage().contains("tokenizer_config.json") && e.getMessage().contains("<nope>"), e.getMessage());
    }

    @Test
    void cleanUpTokenizationSpacesIsAppliedWhenConfigured() throws IOException {
        Tokenizer t = Tokenizers.fromHuggingFace(variant("clean", Map.of(),
                Map.of("add_bos_token", true, "bos_token", "<s>", "clean_up_tokenization_spaces", true)));
        assertEquals("Hello, world. it's", t.decode(t.encode("Hello , world . it 's")));
    }

    @Test
    void addedTokenOptionsAreHonoured() throws IOException {
        Map<String, Object> json = Json.parseObject(Files.readString(Fixtures.brownHf().resolve("tokenizer.json")));
        @SuppressWarnings("unchecked") List<Object> added = new java.util.ArrayList<>((List<Object>) json.get("added_tokens"));
        // a non-special normalized token "the" (matched as its normalized form "▁the"), and a raw single-word
        // token "zz", each given a recognisable id
        int the = 3 + 'A', zz = 3 + 'B'; // the ids of "<0x41>" and "<0x42>"
        added.add(Map.of("id", the, "content", "the", "single_word", false, "lstrip", false, "rstrip", false, "normalized", true, "special", false));
        added.add(Map.of("id", zz, "content", "zz", "single_word", true, "lstrip", false, "rstrip", false, "normalized", false, "special", false));
        added.set(2, Map.of("id", 2, "content", "</s>", "single_word", false, "lstrip", true, "rstrip", true, "normalized", false, "special", true));
        Tokenizer t = Tokenizers.fromHuggingFace(variant("added", Map.of("added_tokens", added), null));
        Tokenizer plain = TokenizerReferenceTest.tokenizer("brown-llama", "hf");

        int[] ids = t.encode("in the end");
        assertEquals(1, java.util.Arrays.stream(ids).filter(id -> id == the).count(), java.util.Arrays.toString(ids));
        assertArrayEquals(plain.encode("in"), java.util.Arrays.copyOf(ids, plain.encode("in").length));
        assertTrue(java.util.Arrays.stream(t.encode("in theory")).anyMatch(id -> id == the), "matched inside '▁theory' too");
        assertTrue(java.util.Arrays.stream(t.encode("the", true, false)).anyMatch(id -> id == the), "non-special: matched without parseSpecial");
        assertTrue(java.util.Arrays.stream(t.encode("a zz b")).anyMatch(id -> id == zz));
        assertTrue(java.util.Arrays.stream(t.encode("azz b")).noneMatch(id -> id == zz), "single_word: not after a word character");
        assertFalse(t.isSpecial(the));

        // lstrip/rstrip swallow the spaces around </s>: "x" and "y" are encoded as if adjacent to it
        assertArrayEquals(plain.encode("x</s>y"), t.encode("x  </s>  y"));
    }
}
