package io.modelopt.core.tokenizer;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.json.Json;
import io.modelopt.core.json.JsonException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a Hugging Face model directory's {@code tokenizer.json} (and {@code tokenizer_config.json}
 * when present) into an {@link HfTokenizer}. Every problem is a {@link ModelFormatException}
 * naming the file and the JSON path of the offending value; components this library does not
 * implement (WordPiece/Unigram models, BertNormalizer, ...) are refused by name rather than
 * approximated.
 */
final class HfTokenizerLoader {
    private static final Logger LOG = LoggerFactory.getLogger(HfTokenizerLoader.class);

    private final Path file;

    private HfTokenizerLoader(Path file) { this.file = file; }

    static HfTokenizer load(Path modelDir) {
        Path tj = modelDir.resolve("tokenizer.json");
        if (!Files.isRegularFile(tj)) throw new ModelFormatException(tj, "tokenizer.json not found in " + modelDir);
        Map<String, Object> root = readObject(tj);
        Path cfgFile = modelDir.resolve("tokenizer_config.json");
        Map<String, Object> config = Files.isRegularFile(cfgFile) ? readObject(cfgFile) : Map.of();
        return new HfTokenizerLoader(tj).build(root, config, cfgFile);
    }

    private static Map<String, Object> readObject(Path p) {
        try {
            return Json.parseObject(Files.readString(p));
        } catch (IOException e) {
            throw new ModelFormatException(p, "cannot read: " + e.getMessage(), e);
        } catch (JsonException e) {
            throw new ModelFormatException(p, "not valid JSON: " + e.getMessage(), e);
        }
    }

    private HfTokenizer build(Map<String, Object> root, Map<String, Object> config, Path cfgFile) {
        Map<String, Object> model = obj(root, "model", "model");
        if (model == null) throw fail("model", "missing");
        String type = str(model, "type", "model.type");
        if (type == null && model.containsKey("merges")) type = "BPE";
        if (!"BPE".equals(type)) throw fail("model.type", "unsupported tokenizer model type '" + type + "' (only BPE is implemented)");

        // vocabulary
        Map<String, Object> vocabJson = obj(model, "vocab", "model.vocab");
        if (vocabJson == null) throw fail("model.vocab", "missing");
        Map<String, Integer> vocab = new HashMap<>(vocabJson.size() * 2);
        int maxId = -1;
        for (var e : vocabJson.entrySet()) {
            int id = intValue(e.getValue(), "model.vocab[\"" + e.getKey() + "\"]");
            vocab.put(e.getKey(), id);
            maxId = Math.max(maxId, id);
        }
        String[] idToToken = new String[maxId + 1];
        vocab.forEach((t, id) -> { if (idToToken[id] == null) idToToken[id] = t; });

        if (nonEmpty(model.get("continuing_subword_prefix")) || nonEmpty(model.get("end_of_word_suffix")))
            throw fail("model", "BPE with continuing_subword_prefix/end_of_word_suffix is not supported");
        Object dropout = model.get("dropout");
        if (dropout instanceof Number d && d.doubleValue() > 0) LOG.warn("{}: BPE dropout {} ignored (deterministic encoding)", file, d);

        // merges
        List<Object> mergeList = list(model, "merges", "model.merges");
        if (mergeList == null) mergeList = List.of();
        MergeTable merges = new MergeTable(mergeList.size());
        List<String> mergeResults = new ArrayList<>(mergeList.size());
        for (int r = 0; r < mergeList.size(); r++) {
            String where = "model.merges[" + r + "]";
            String a, b;
            Object m = mergeList.get(r);
            if (m instanceof String s) {
                int sp = s.indexOf(' ');
                if (sp < 0 || s.indexOf(' ', sp + 1) >= 0) throw fail(where, "merge '" + s + "' is not two tokens separated by one space");
                a = s.substring(0, sp);
                b = s.substring(sp + 1);
            } else if (m instanceof List<?> pair && pair.size() == 2 && pair.get(0) instanceof String x && pair.get(1) instanceof String y) {
                a = x;
                b = y;
            } else {
                throw fail(where, "a merge must be \"a b\" or [\"a\", \"b\"]");
            }
            Integer ia = vocab.get(a), ib = vocab.get(b), ic = vocab.get(a + b);
            if (ia == null || ib == null || ic == null)
                throw fail(where, "merge of '" + a + "' and '" + b + "': '" + (ia == null ? a : ib == null ? b : a + b) + "' is not in the vocabulary");
            merges.put(ia, ib, r, ic, false);
            mergeResults.add(a + b);
        }

        String unk = str(model, "unk_token", "model.unk_token");
        int unkId = -1;
        if (unk != null) {
            Integer u = vocab.get(unk);
            if (u == null) throw fail("model.unk_token", "'" + unk + "' is not in the vocabulary");
            unkId = u;
        }
        HfBpeModel bpe = new HfBpeModel(vocab, idToToken, merges, mergeResults, bool(model, "byte_fallback", false),
                bool(model, "fuse_unk", false), bool(model, "ignore_merges", false), unkId);

        HfNormalizer normalizer = normalizer(root.get("normalizer"), "normalizer");
        HfPreTokenizer pre = preTokenizer(root.get("pre_tokenizer"), "pre_tokenizer");
        HfDecoder decoder = decoder(root.get("decoder"), "decoder");

        // added tokens
        List<AddedToken> addedTokens = new ArrayList<>();
        Map<Integer, String> normalizedContents = new HashMap<>();
        List<Object> addedJson = list(root, "added_tokens", "added_tokens");
        if (addedJson != null) {
            for (int i = 0; i < addedJson.size(); i++) {
                String where = "added_tokens[" + i + "]";
                if (!(addedJson.get(i) instanceof Map<?, ?> raw)) throw fail(where, "expected an object");
                @SuppressWarnings("unchecked") Map<String, Object> t = (Map<String, Object>) raw;
                int id = intValue(t.get("id"), where + ".id");
                String content = str(t, "content", where + ".content");
                if (content == null) throw fail(where + ".content", "missing");
                boolean special = bool(t, "special", false);
                AddedToken at = new AddedToken(id, content, special, bool(t, "normalized", !special),
                        bool(t, "lstrip", false), bool(t, "rstrip", false), bool(t, "single_word", false));
                addedTokens.add(at);
                if (at.normalized()) normalizedContents.put(id, normalizer == null ? content : normalizer.normalize(content));
            }
        }
        Map<String, Integer> contentIds = new HashMap<>(vocab);
        for (AddedToken t : addedTokens) contentIds.put(t.content(), t.id());

        // specials around a sequence: tokenizer_config.json's add_bos_token/add_eos_token win (LlamaTokenizerFast)
        HfTokenizer.Template template = postProcessor(root.get("post_processor"), "post_processor", contentIds);
        String bosText = tokenText(config.get("bos_token"));
        String eosText = tokenText(config.get("eos_token"));
        int bosId = bosText != null ? contentIds.getOrDefault(bosText, -1) : (template.prefix().length > 0 ? template.prefix()[0] : -1);
        int eosId = eosText != null ? contentIds.getOrDefault(eosText, -1) : (template.suffix().length > 0 ? template.suffix()[template.suffix().length - 1] : -1);
        if (config.get("add_bos_token") instanceof Boolean || config.get("add_eos_token") instanceof Boolean) {
            boolean addBos = config.get("add_bos_token") instanceof Boolean ab ? ab : template.prefix().length > 0;
            boolean addEos = config.get("add_eos_token") instanceof Boolean ae && ae;
            if (addBos && bosId < 0) throw new ModelFormatException(cfgFile, "add_bos_token is true but bos_token " + (bosText == null ? "is not set" : "'" + bosText + "' is not a token"));
            if (addEos && eosId < 0) throw new ModelFormatException(cfgFile, "add_eos_token is true but eos_token " + (eosText == null ? "is not set" : "'" + eosText + "' is not a token"));
            template = new HfTokenizer.Template(addBos ? new int[] {bosId} : new int[0], addEos ? new int[] {eosId} : new int[0]);
        }
        boolean cleanUp = config.get("clean_up_tokenization_spaces") instanceof Boolean c && c;
        return new HfTokenizer(file.toString(), bpe, addedTokens, normalizedContents, normalizer, pre, decoder, template,
                bosId, eosId, cleanUp);
    }

    /** A special token in tokenizer_config.json: a string, or an AddedToken object with "content". */
    private static String tokenText(Object v) {
        if (v instanceof String s) return s;
        if (v instanceof Map<?, ?> m && m.get("content") instanceof String s) return s;
        return null;
    }

    // ---- components ----

    private HfNormalizer normalizer(Object json, String where) {
        if (json == null) return null;
        Map<String, Object> o = asObject(json, where);
        String type = typeOf(o, where);
        return switch (type) {
            case "Sequence" -> {
                List<HfNormalizer> steps = new ArrayList<>();
                List<Object> l = list(o, "normalizers", where + ".normalizers");
                if (l != null) for (int i = 0; i < l.size(); i++) {
                    HfNormalizer n = normalizer(l.get(i), where + ".normalizers[" + i + "]");
                    if (n != null) steps.add(n);
                }
                yield new HfNormalizer.Sequence(List.copyOf(steps));
            }
            case "Prepend" -> new HfNormalizer.Prepend(requireStr(o, "prepend", where));
            case "Replace" -> {
                Object[] p = pattern(o, where);
                yield new HfNormalizer.Replace((String) p[0], (Pattern) p[1], requireStr(o, "content", where));
            }
            case "NFC" -> new HfNormalizer.UnicodeForm(Normalizer.Form.NFC);
            case "NFD" -> new HfNormalizer.UnicodeForm(Normalizer.Form.NFD);
            case "NFKC" -> new HfNormalizer.UnicodeForm(Normalizer.Form.NFKC);
            case "NFKD" -> new HfNormalizer.UnicodeForm(Normalizer.Form.NFKD);
            case "Lowercase" -> new HfNormalizer.Lowercase();
            case "Strip" -> new HfNormalizer.Strip(bool(o, "strip_left", true), bool(o, "strip_right", true));
            default -> throw fail(where + ".type", "unsupported normalizer '" + type + "'");
        };
    }

    private HfPreTokenizer preTokenizer(Object json, String where) {
        if (json == null) return null;
        Map<String, Object> o = asObject(json, where);
        String type = typeOf(o, where);
        return switch (type) {
            case "Sequence" -> {
                List<HfPreTokenizer> steps = new ArrayList<>();
                List<Object> l = list(o, "pretokenizers", where + ".pretokenizers");
                if (l != null) for (int i = 0; i < l.size(); i++) {
                    HfPreTokenizer p = preTokenizer(l.get(i), where + ".pretokenizers[" + i + "]");
                    if (p != null) steps.add(p);
                }
                yield new HfPreTokenizer.Sequence(List.copyOf(steps));
            }
            case "Split" -> {
                Object[] p = pattern(o, where);
                SplitBehavior b = SplitBehavior.parse(str(o, "behavior", where + ".behavior"));
                if (b == null) throw fail(where + ".behavior", "unknown split behavior '" + o.get("behavior") + "'");
                yield new HfPreTokenizer.Split((Pattern) p[1], (String) p[0], b, bool(o, "invert", false));
            }
            case "ByteLevel" -> new HfPreTokenizer.ByteLevel(bool(o, "add_prefix_space", true), bool(o, "use_regex", true));
            case "Metaspace" -> new HfPreTokenizer.Metaspace(replacementChar(o, where), prependScheme(o, where), bool(o, "split", true));
            case "Whitespace" -> new HfPreTokenizer.Whitespace();
            case "WhitespaceSplit" -> new HfPreTokenizer.WhitespaceSplit();
            case "Digits" -> new HfPreTokenizer.Digits(bool(o, "individual_digits", false));
            case "Punctuation" -> {
                SplitBehavior b = o.get("behavior") == null ? SplitBehavior.ISOLATED : SplitBehavior.parse(str(o, "behavior", where));
                if (b == null) throw fail(where + ".behavior", "unknown split behavior '" + o.get("behavior") + "'");
                yield new HfPreTokenizer.Punctuation(b);
            }
            default -> throw fail(where + ".type", "unsupported pre_tokenizer '" + type + "'");
        };
    }

    private HfDecoder decoder(Object json, String where) {
        if (json == null) return null;
        Map<String, Object> o = asObject(json, where);
        String type = typeOf(o, where);
        return switch (type) {
            case "Sequence" -> {
                List<HfDecoder> steps = new ArrayList<>();
                List<Object> l = list(o, "decoders", where + ".decoders");
                if (l != null) for (int i = 0; i < l.size(); i++) {
                    HfDecoder d = decoder(l.get(i), where + ".decoders[" + i + "]");
                    if (d != null) steps.add(d);
                }
                yield new HfDecoder.Sequence(List.copyOf(steps));
            }
            case "Replace" -> {
                Object[] p = pattern(o, where);
                yield new HfDecoder.Replace((String) p[0], (Pattern) p[1], requireStr(o, "content", where));
            }
            case "ByteFallback" -> new HfDecoder.ByteFallback();
            case "Fuse" -> new HfDecoder.Fuse();
            case "Strip" -> {
                String content = requireStr(o, "content", where);
                if (content.codePointCount(0, content.length()) != 1) throw fail(where + ".content", "must be one character");
                yield new HfDecoder.Strip(content.codePointAt(0), intValue(o.get("start"), where + ".start"), intValue(o.get("stop"), where + ".stop"));
            }
            case "Metaspace" -> new HfDecoder.Metaspace(replacementChar(o, where), prependScheme(o, where) != HfPreTokenizer.PrependScheme.NEVER);
            case "ByteLevel" -> new HfDecoder.ByteLevel();
            default -> throw fail(where + ".type", "unsupported decoder '" + type + "'");
        };
    }

    private HfTokenizer.Template postProcessor(Object json, String where, Map<String, Integer> contentIds) {
        if (json == null) return HfTokenizer.Template.NONE;
        Map<String, Object> o = asObject(json, where);
        String type = typeOf(o, where);
        return switch (type) {
            case "ByteLevel" -> HfTokenizer.Template.NONE;
            case "Sequence" -> {
                List<Integer> pre = new ArrayList<>(), post = new ArrayList<>();
                List<Object> l = list(o, "processors", where + ".processors");
                if (l != null) for (int i = 0; i < l.size(); i++) {
                    HfTokenizer.Template t = postProcessor(l.get(i), where + ".processors[" + i + "]", contentIds);
                    for (int k = t.prefix().length - 1; k >= 0; k--) pre.addFirst(t.prefix()[k]);
                    for (int id : t.suffix()) post.add(id);
                }
                yield new HfTokenizer.Template(pre.stream().mapToInt(Integer::intValue).toArray(), post.stream().mapToInt(Integer::intValue).toArray());
            }
            case "TemplateProcessing" -> template(o, where);
            case "RobertaProcessing", "BertProcessing" -> {
                int cls = pairId(o, "cls", where, contentIds), sep = pairId(o, "sep", where, contentIds);
                yield new HfTokenizer.Template(new int[] {cls}, new int[] {sep});
            }
            default -> throw fail(where + ".type", "unsupported post_processor '" + type + "'");
        };
    }

    private HfTokenizer.Template template(Map<String, Object> o, String where) {
        List<Object> single = list(o, "single", where + ".single");
        Map<String, Object> specials = obj(o, "special_tokens", where + ".special_tokens");
        List<Integer> pre = new ArrayList<>(), post = new ArrayList<>();
        boolean seenA = false;
        if (single != null) for (int i = 0; i < single.size(); i++) {
            String w = where + ".single[" + i + "]";
            Map<String, Object> piece = asObject(single.get(i), w);
            if (piece.containsKey("Sequence")) { seenA = true; continue; }
            Map<String, Object> st = obj(piece, "SpecialToken", w + ".SpecialToken");
            if (st == null) throw fail(w, "expected Sequence or SpecialToken");
            String name = requireStr(st, "id", w + ".SpecialToken");
            Map<String, Object> spec = specials == null ? null : obj(specials, name, where + ".special_tokens." + name);
            if (spec == null) throw fail(w, "special token '" + name + "' is not in special_tokens");
            List<Object> ids = list(spec, "ids", where + ".special_tokens." + name + ".ids");
            if (ids == null) throw fail(where + ".special_tokens." + name + ".ids", "missing");
            for (int k = 0; k < ids.size(); k++) (seenA ? post : pre).add(intValue(ids.get(k), where + ".special_tokens." + name + ".ids[" + k + "]"));
        }
        return new HfTokenizer.Template(pre.stream().mapToInt(Integer::intValue).toArray(), post.stream().mapToInt(Integer::intValue).toArray());
    }

    private int pairId(Map<String, Object> o, String key, String where, Map<String, Integer> contentIds) {
        List<Object> p = list(o, key, where + "." + key);
        if (p == null || p.size() != 2) throw fail(where + "." + key, "expected [token, id]");
        return intValue(p.get(1), where + "." + key + "[1]");
    }

    /** A pattern object {"String": s} or {"Regex": r}: returns {literal, null} or {null, compiled}. */
    private Object[] pattern(Map<String, Object> o, String where) {
        Map<String, Object> p = obj(o, "pattern", where + ".pattern");
        if (p == null) throw fail(where + ".pattern", "missing");
        if (p.get("String") instanceof String s) return new Object[] {s, null};
        if (p.get("Regex") instanceof String r) {
            try {
                return new Object[] {null, RegexDialect.compile(r)};
            } catch (PatternSyntaxException e) {
                throw fail(where + ".pattern.Regex", "cannot compile /" + r + "/ as a Java regex: " + e.getDescription());
            }
        }
        throw fail(where + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    }

    private char replacementChar(Map<String, Object> o, String where) {
        String r = str(o, "replacement", where + ".replacement");
        if (r == null) return '▁';
        if (r.length() != 1) throw fail(where + ".replacement", "must be one character");
        return r.charAt(0);
    }

    private HfPreTokenizer.PrependScheme prependScheme(Map<String, Object> o, String where) {
        String s = str(o, "prepend_scheme", where + ".prepend_scheme");
        if (s == null) return bool(o, "add_prefix_space", true) ? HfPreTokenizer.PrependScheme.ALWAYS : HfPreTokenizer.PrependScheme.NEVER;
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "always" -> HfPreTokenizer.PrependScheme.ALWAYS;
            case "first" -> HfPreTokenizer.PrependScheme.FIRST;
            case "never" -> HfPreTokenizer.PrependScheme.NEVER;
            default -> throw fail(where + ".prepend_scheme", "unknown prepend_scheme '" + s + "'");
        };
    }

    // ---- JSON access with located errors ----

    private ModelFormatException fail(String where, String problem) {
        return new ModelFormatException(file, where + ": " + problem);
    }

    private String typeOf(Map<String, Object> o, String where) {
        String t = str(o, "type", where + ".type");
        if (t == null) throw fail(where + ".type", "missing");
        return t;
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> asObject(Object v, String where) {
        if (v instanceof Map<?, ?> m) return (Map<String, Object>) m;
        throw fail(where, "expected an object");
    }

    private Map<String, Object> obj(Map<String, Object> o, String key, String where) {
        Object v = o.get(key);
        return v == null ? null : asObject(v, where);
    }

    @SuppressWarnings("unchecked")
    private List<Object> list(Map<String, Object> o, String key, String where) {
        Object v = o.get(key);
        if (v == null) return null;
        if (v instanceof List<?> l) return (List<Object>) l;
        throw fail(where, "expected an array");
    }

    private String str(Map<String, Object> o, String key, String where) {
        Object v = o.get(key);
        if (v == null || v instanceof String) return (String) v;
        throw fail(where, "expected a string");
    }

    private String requireStr(Map<String, Object> o, String key, String where) {
        String s = str(o, key, where + "." + key);
        if (s == null) throw fail(where + "." + key, "missing");
        return s;
    }

    private boolean bool(Map<String, Object> o, String key, boolean dflt) {
        Object v = o.get(key);
        return v instanceof Boolean b ? b : dflt;
    }

    private int intValue(Object v, String where) {
        if (v instanceof Long l && l >= 0 && l <= Integer.MAX_VALUE) return (int) (long) l;
        throw fail(where, "expected a non-negative integer, got " + v);
    }

    private static boolean nonEmpty(Object v) {
        return v instanceof String s && !s.isEmpty();
    }
}
