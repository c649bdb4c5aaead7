package io.modelopt.core.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Hugging Face {@code tokenizer.json} BPE tokenizer, run as HF tokenizers runs it:
 * added tokens that are not normalized are cut out of the raw text; each remaining piece is
 * normalized, then normalized added tokens are cut out of it; the rest goes through the
 * pre-tokenizer and the BPE model; with {@code addSpecial} the post-processor's (or
 * tokenizer_config.json's) BOS/EOS wrap the result. Built by {@link HfTokenizerLoader}.
 */
final class HfTokenizer implements Tokenizer {
    /** The special ids a post-processor puts around a single sequence. */
    record Template(int[] prefix, int[] suffix) {
        static final Template NONE = new Template(new int[0], new int[0]);
    }

    private final String source;
    private final HfBpeModel model;
    private final Map<Integer, AddedToken> added;
    private final Map<String, Integer> addedByContent;
    private final AddedVocabulary rawAdded, normalizedAdded;
    private final HfNormalizer normalizer;
    private final HfPreTokenizer preTokenizer;
    private final HfDecoder decoder;
    private final Template template;
    private final int bosId, eosId;
    private final boolean cleanUpSpaces;
    private final int vocabSize;
    // how a single token reads back, for tokenBytes (derived from the decoder)
    private final boolean byteLevelDecoder, byteFallbackDecoder;
    private final int spaceMark;

    HfTokenizer(String source, HfBpeModel model, List<AddedToken> addedTokens, Map<Integer, String> normalizedContents,
                HfNormalizer normalizer, HfPreTokenizer preTokenizer, HfDecoder decoder, Template template,
                int bosId, int eosId, boolean cleanUpSpaces) {
        this.source = source;
        this.model = model;
        this.added = new java.util.HashMap<>();
        this.addedByContent = new java.util.HashMap<>();
        List<AddedToken> raw = new ArrayList<>(), norm = new ArrayList<>();
        Map<Integer, String> rawTexts = new java.util.HashMap<>();
        int maxId = model.size() - 1;
        for (AddedToken t : addedTokens) {
            added.put(t.id(), t);
            addedByContent.putIfAbsent(t.content(), t.id());
            maxId = Math.max(maxId, t.id());
            if (t.normalized()) norm.add(t);
            else { raw.add(t); rawTexts.put(t.id(), t.content()); }
        }
        this.rawAdded = new AddedVocabulary(raw, rawTexts);
        this.normalizedAdded = new AddedVocabulary(norm, normalizedContents);
        this.normalizer = normalizer;
        this.preTokenizer = preTokenizer;
        this.decoder = decoder;
        this.template = template;
        this.bosId = bosId;
        this.eosId = eosId;
        this.cleanUpSpaces = cleanUpSpaces;
        this.vocabSize = maxId + 1;
        boolean[] flags = new boolean[2];
        int[] mark = {-1};
        inspect(decoder, flags, mark);
        this.byteLevelDecoder = flags[0];
        this.byteFallbackDecoder = flags[1];
        this.spaceMark = mark[0];
    }

    private static void inspect(HfDecoder d, boolean[] flags, int[] mark) {
        switch (d) {
            case null -> {}
            case HfDecoder.Sequence s -> s.steps().forEach(x -> inspect(x, flags, mark));
            case HfDecoder.ByteLevel b -> flags[0] = true;
            case HfDecoder.ByteFallback b -> flags[1] = true;
            case HfDecoder.Metaspace m -> mark[0] = m.replacement();
            case HfDecoder.Replace r -> {
                if (r.regex() == null && r.content().equals(" ") && r.literal().codePointCount(0, r.literal().length()) == 1)
                    mark[0] = r.literal().codePointAt(0);
            }
            default -> {}
        }
    }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList(text.length() / 3 + 4);
        if (addSpecial) for (int id : template.prefix()) out.add(id);
        for (AddedVocabulary.Segment seg : rawAdded.split(Utf8.wellFormed(text), parseSpecial)) {
            if (seg.id() >= 0) { out.add(seg.id()); continue; }
            String normalized = normalizer == null ? seg.text() : normalizer.normalize(seg.text());
            for (AddedVocabulary.Segment seg2 : normalizedAdded.split(normalized, parseSpecial)) {
                if (seg2.id() >= 0) { out.add(seg2.id()); continue; }
                List<HfPreTokenizer.Piece> pieces = List.of(new HfPreTokenizer.Piece(seg2.text(), seg.start() == 0 && seg2.start() == 0));
                if (preTokenizer != null) pieces = preTokenizer.apply(pieces);
                for (HfPreTokenizer.Piece p : pieces) model.tokenize(p.text(), out);
            }
        }
        if (addSpecial) for (int id : template.suffix()) out.add(id);
        return out.toArray();
    }

    @Override
    public String decode(int[] ids, boolean skipSpecial) {
        List<String> tokens = new ArrayList<>(ids.length);
        for (int id : ids) {
            AddedToken a = added.get(id);
            if (a != null) {
                if (!(skipSpecial && a.special())) tokens.add(a.content());
                continue;
            }
            String t = model.token(id);
            if (t != null) tokens.add(t);
        }
        String text = decoder == null ? String.join(" ", tokens) : String.join("", decoder.decodeChain(tokens));
        return cleanUpSpaces ? cleanUpTokenization(text) : text;
    }

    /** transformers' {@code clean_up_tokenization} (applied when tokenizer_config.json asks for it). */
    static String cleanUpTokenization(String s) {
        return s.replace(" .", ".").replace(" ?", "?").replace(" !", "!").replace(" ,", ",").replace(" ' ", "'")
                .replace(" n't", "n't").replace(" 'm", "'m").replace(" 's", "'s").replace(" 've", "'ve").replace(" 're", "'re");
    }

    @Override
    public byte[] tokenBytes(int id) {
        AddedToken a = added.get(id);
        if (a != null) return a.special() ? new byte[0] : a.content().getBytes(StandardCharsets.UTF_8);
        String t = model.token(id);
        if (t == null) return new byte[0];
        if (byteLevelDecoder) return ByteLevelAlphabet.decodeLenient(t);
        if (byteFallbackDecoder) {
            int b = HfDecoder.ByteFallback.byteToken(t);
            if (b >= 0) return new byte[] {(byte) b};
        }
        if (spaceMark >= 0) t = t.replace(new String(Character.toChars(spaceMark)), " ");
        return t.getBytes(StandardCharsets.UTF_8);
    }

    @Override public int vocabSize() { return vocabSize; }

    @Override
    public String piece(int id) {
        AddedToken a = added.get(id);
        return a != null ? a.content() : model.token(id);
    }

    @Override
    public int idOf(String piece) {
        Integer id = addedByContent.get(piece);
        if (id != null) return id;
        id = model.id(piece);
        return id != null ? id : -1;
    }

    @Override public int bosId() { return bosId; }
    @Override public int eosId() { return eosId; }

    @Override
    public boolean addsBos() { return bosId >= 0 && template.prefix().length > 0 && template.prefix()[0] == bosId; }

    @Override
    public boolean isSpecial(int id) {
        AddedToken a = added.get(id);
        return a != null && a.special();
    }

    @Override
    public String describe() {
        return "tokenizer.json BPE tokenizer (" + source + "), " + vocabSize + " tokens, bos=" + bosId + " eos=" + eosId
                + ", adds " + java.util.Arrays.toString(template.prefix()) + " $A " + java.util.Arrays.toString(template.suffix())
                + ", " + added.size() + " added tokens" + (byteLevelDecoder ? ", byte-level" : "");
    }
}
