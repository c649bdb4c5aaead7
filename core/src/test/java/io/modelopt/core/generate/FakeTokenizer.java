package io.modelopt.core.generate;

import io.modelopt.core.tokenizer.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small SentencePiece-like tokenizer for tests: 0 {@code <unk>}, 1 {@code <s>}, 2 {@code </s>},
 * 3..258 byte tokens {@code <0xNN>}, then the given word pieces ({@code ▁} = space). Encoding adds
 * BOS and the {@code ▁} prefix and takes the longest piece, else bytes; decoding drops the leading
 * space of the whole text, as SentencePiece does.
 */
final class FakeTokenizer implements Tokenizer {
    static final int BOS = 1, EOS = 2, BYTE0 = 3;
    private final List<String> pieces = new ArrayList<>();
    private final boolean stripsLeadingSpace;

    FakeTokenizer(boolean stripsLeadingSpace, String... words) {
        this.stripsLeadingSpace = stripsLeadingSpace;
        pieces.add("<unk>");
        pieces.add("<s>");
        pieces.add("</s>");
        for (int b = 0; b < 256; b++) pieces.add(String.format("<0x%02X>", b));
        pieces.addAll(List.of(words));
    }

    FakeTokenizer(String... words) { this(true, words); }

    @Override public int vocabSize() { return pieces.size(); }

    @Override public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        List<Integer> ids = new ArrayList<>();
        if (addSpecial) ids.add(BOS);
        if (!text.isEmpty()) {
            String s = ("▁" + text).replace(' ', '▁');
            int i = 0;
            while (i < s.length()) {
                int best = -1, bestLen = 0;
                for (int id = BYTE0 + 256; id < pieces.size(); id++) {
                    String p = pieces.get(id);
                    if (p.length() > bestLen && s.startsWith(p, i)) {
                        best = id;
                        bestLen = p.length();
                    }
                }
                if (best >= 0) {
                    ids.add(best);
                    i += bestLen;
                } else {
                    int cp = s.codePointAt(i);
                    for (byte b : new String(Character.toChars(cp)).replace('▁', ' ').getBytes(StandardCharsets.UTF_8)) ids.add(BYTE0 + (b & 0xff));
                    i += Character.charCount(cp);
                }
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override public String decode(int[] ids, boolean skipSpecial) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int id : ids) if (!isSpecial(id)) out.writeBytes(tokenBytes(id));
        String s = out.toString(StandardCharsets.UTF_8);
        return stripsLeadingSpace && s.startsWith(" ") ? s.substring(1) : s;
    }

    @Override public byte[] tokenBytes(int id) {
        if (id >= BYTE0 && id < BYTE0 + 256) return new byte[] {(byte) (id - BYTE0)};
        if (isSpecial(id)) return pieces.get(id).getBytes(StandardCharsets.UTF_8);
        return pieces.get(id).replace('▁', ' ').getBytes(StandardCharsets.UTF_8);
    }

    @Override public String piece(int id) { return pieces.get(id); }

    @Override public int idOf(String piece) { return pieces.indexOf(piece); }

    @Override public int bosId() { return BOS; }

    @Override public int eosId() { return EOS; }

    @Override public boolean addsBos() { return true; }

    @Override public boolean isSpecial(int id) { return id == BOS || id == EOS || id == 0; }

    @Override public String describe() { return "fake SPM, " + pieces.size() + " tokens"; }

    int byteToken(int b) { return BYTE0 + b; }
}
