package io.modelopt.core.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tokenizer.json {@code decoder}: turns the list of token strings back into text pieces, step
 * by step, with HF tokenizers' {@code decode_chain} semantics (each step sees the list the
 * previous one produced; the final list is concatenated).
 */
sealed interface HfDecoder {
    List<String> decodeChain(List<String> tokens);

    record Sequence(List<HfDecoder> steps) implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            for (HfDecoder d : steps) tokens = d.decodeChain(tokens);
            return tokens;
        }
    }

    /** Replaces a literal ({@code regex} null) or regex in every token. */
    record Replace(String literal, Pattern regex, String content) implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (String t : tokens) {
                out.add(regex == null ? (literal.isEmpty() ? t : t.replace(literal, content))
                        : regex.matcher(t).replaceAll(Matcher.quoteReplacement(content)));
            }
            return out;
        }
    }

    /**
     * {@code <0xNN>} tokens become bytes; a run of them becomes its UTF-8 text, or one U+FFFD per
     * byte token when the run is not valid UTF-8.
     */
    record ByteFallback() implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            ByteArrayOutputStream run = new ByteArrayOutputStream();
            for (String t : tokens) {
                int b = byteToken(t);
                if (b >= 0) { run.write(b); continue; }
                flush(run, out);
                out.add(t);
            }
            flush(run, out);
            return out;
        }

        private static void flush(ByteArrayOutputStream run, List<String> out) {
            if (run.size() == 0) return;
            byte[] bytes = run.toByteArray();
            run.reset();
            var dec = StandardCharsets.UTF_8.newDecoder();
            try {
                out.add(dec.decode(java.nio.ByteBuffer.wrap(bytes)).toString());
            } catch (java.nio.charset.CharacterCodingException e) {
                for (int i = 0; i < bytes.length; i++) out.add("\uFFFD");
            }
        }

        static int byteToken(String t) {
            if (t.length() != 6 || !t.startsWith("<0x") || t.charAt(5) != '>') return -1;
            int hi = Character.digit(t.charAt(3), 16), lo = Character.digit(t.charAt(4), 16);
            return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
        }
    }

    /** Concatenates all tokens into one. */
    record Fuse() implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) { return List.of(String.join("", tokens)); }
    }

    /** Removes up to {@code start} leading and {@code stop} trailing {@code content} characters from every token. */
    record Strip(int content, int start, int stop) implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (String t : tokens) {
                int[] cps = t.codePoints().toArray();
                int a = 0;
                while (a < start && a < cps.length && cps[a] == content) a++;
                int b = cps.length;
                for (int i = 0; i < stop && b > a && cps[b - 1] == content; i++) b--;
                out.add(new String(cps, a, b - a));
            }
            return out;
        }
    }

    /** The replacement character becomes a space, except in the first token when a prefix was prepended. */
    record Metaspace(char replacement, boolean prepends) implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            List<String> out = new ArrayList<>(tokens.size());
            for (int i = 0; i < tokens.size(); i++) {
                String t = tokens.get(i);
                out.add(i == 0 && prepends ? t.replace(String.valueOf(replacement), "") : t.replace(replacement, ' '));
            }
            return out;
        }
    }

    /** Byte-level tokens back to bytes (a token with characters outside the alphabet keeps its UTF-8), all joined and decoded lossily. */
    record ByteLevel() implements HfDecoder {
        public List<String> decodeChain(List<String> tokens) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (String t : tokens) {
                byte[] b = ByteLevelAlphabet.decodeOrNull(t);
                out.writeBytes(b != null ? b : t.getBytes(StandardCharsets.UTF_8));
            }
            return List.of(out.toString(StandardCharsets.UTF_8));
        }
    }
}
