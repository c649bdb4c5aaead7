package io.modelopt.core.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.gguf.GgufFile;
import io.modelopt.core.gguf.GgufVocabularyReader;
import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our tokenizers against ids computed by others: every line of each fixture's
 * tokenize-reference.jsonl (SentencePiece and llama.cpp agreed on each), through the
 * tokenizer.json path and through the GGUF-vocabulary path; and whole corpus files, whose
 * SentencePiece token counts are in tokenizer_check.json, encoded as one string.
 */
class TokenizerReferenceTest {
    private static final Map<String, Tokenizer> CACHE = new ConcurrentHashMap<>();

    record Ref(String text, int[] ids) {}

    static Tokenizer tokenizer(String fixture, String path) {
        return CACHE.computeIfAbsent(fixture + "/" + path, k -> switch (path) {
            case "hf" -> Tokenizers.fromHuggingFace(Fixtures.file(fixture + "/hf"));
            case "gguf" -> {
                Path gguf = Fixtures.file(fixture + "/gguf/" + fixture + "-f32.gguf");
                try (GgufFile f = GgufFile.open(gguf)) {
                    yield Tokenizers.fromGguf(GgufVocabularyReader.read(f));
                }
            }
            default -> throw new IllegalArgumentException(path);
        });
    }

    static List<Ref> references(String fixture) throws IOException {
        List<Ref> refs = new ArrayList<>();
        for (String line : Files.readAllLines(Fixtures.file(fixture + "/tokenize-reference.jsonl"))) {
            if (line.isBlank()) continue;
            Map<String, Object> o = Json.parseObject(line);
            List<?> ids = (List<?>) o.get("ids_with_bos");
            refs.add(new Ref((String) o.get("text"), ids.stream().mapToInt(x -> ((Number) x).intValue()).toArray()));
        }
        return refs;
    }

    @ParameterizedTest(name = "{0} via {1}")
    @CsvSource({"brown-llama, hf, 197", "brown-llama, gguf, 197", "stories260K, hf, 133", "stories260K, gguf, 133"})
    void everyReferenceLineMatches(String fixture, String path, int expectedLines) throws IOException {
        Tokenizer tok = tokenizer(fixture, path);
        List<Ref> refs = references(fixture);
        assertEquals(expectedLines, refs.size(), "reference lines in " + fixture);
        List<String> mismatches = new ArrayList<>();
        int matched = 0;
        for (Ref r : refs) {
            int[] got = tok.encode(r.text());
            if (Arrays.equals(r.ids(), got)) matched++;
            else mismatches.add(r.text() + "\n  expected " + Arrays.toString(r.ids()) + "\n  got      " + Arrays.toString(got));
        }
        assertTrue(mismatches.isEmpty(), matched + "/" + refs.size() + " matched; first mismatches:\n"
                + String.join("\n", mismatches.subList(0, Math.min(5, mismatches.size()))));
        assertEquals(refs.size(), matched);
    }

    @ParameterizedTest(name = "{0} via {1}")
    @CsvSource({"brown-llama, hf", "brown-llama, gguf", "stories260K, hf", "stories260K, gguf"})
    void referenceLinesDecodeBackToTheirText(String fixture, String path) throws IOException {
        Tokenizer tok = tokenizer(fixture, path);
        for (Ref r : references(fixture)) assertEquals(r.text(), tok.decode(r.ids()), "decode of " + Arrays.toString(r.ids()));
    }

    @ParameterizedTest(name = "{0} {1} via {2}")
    @CsvSource({
            "brown-llama, corpora/brown/test.txt, hf, 86136",
            "brown-llama, corpora/brown/test.txt, gguf, 86136",
            "brown-llama, corpora/brown/valid.txt, hf, 85788",
            "brown-llama, corpora/brown/valid.txt, gguf, 85788",
            "stories260K, corpora/brown/fiction-test.txt, hf, 37527",
            "stories260K, corpora/brown/fiction-test.txt, gguf, 37527"})
    void wholeFileTokenCountsMatchSentencePiece(String fixture, String corpus, String path, int expected) throws IOException {
        Tokenizer tok = tokenizer(fixture, path);
        String text = Files.readString(Fixtures.file(corpus));
        int[] withBos = tok.encode(text);
        assertEquals(expected + 1, withBos.length, "tokens with BOS");
        assertEquals(tok.bosId(), withBos[0]);
        int[] plain = tok.encode(text, false, true);
        assertEquals(expected, plain.length, "tokens without BOS");
        assertArrayEquals(Arrays.copyOfRange(withBos, 1, withBos.length), plain);
        assertEquals(text, tok.decode(withBos), "decode(encode(text)) == text");
    }

    @ParameterizedTest
    @ValueSource(strings = {"corpora/brown/test.txt", "corpora/brown/valid.txt"})
    void bothPathsGiveIdenticalIdsForWholeBrownFiles(String corpus) throws IOException {
        String text = Files.readString(Fixtures.file(corpus));
        assertArrayEquals(tokenizer("brown-llama", "hf").encode(text), tokenizer("brown-llama", "gguf").encode(text));
    }
}
