package io.modelopt.core.tokenizer;

import java.util.Arrays;

/**
 * llama.cpp's detokenizer clean-up for BPE vocabularies ({@code clean_spaces}; transformers'
 * {@code clean_up_tokenization} in spirit): drops the space before {@code ? ! . ,}, collapses
 * " ' " to "'", and drops the space before 's 'm 're 've. Works on bytes, as llama.cpp does.
 */
final class CleanSpaces {
    private CleanSpaces() {}

    static byte[] apply(byte[] t) {
        byte[] text = t.clone();
        int total = text.length;
        // first pass: " ?", " !", " .", " ,"
        int total1 = total;
        total = total > 0 ? 1 : 0;
        for (int i = 1; i < total1; i++) {
            byte x = text[i];
            if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) total--;
            text[total++] = x;
        }
        // second pass: strip a single apostrophe between spaces
        int total2 = total;
        total = total > 0 ? 1 : 0;
        for (int i = 1; i < total2; i++) {
            byte x = text[i];
            if (x == '\'' && i + 1 < total2 && text[i - 1] == ' ' && text[i + 1] == ' ') {
                total--;
                text[++i] = 0;
            }
            text[total++] = x;
        }
        // third pass: " 's", " 'm", " 're", " 've"
        int total3 = total;
        total = total > 0 ? 1 : 0;
        for (int i = 1; i < total3; i++) {
            byte x = text[i];
            if (text[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
                byte x1 = text[i + 1];
                if (x1 == 's' || x1 == 'm') total--;
                else if (i + 2 < total3) {
                    byte x2 = text[i + 2];
                    if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) total--;
                }
            }
            text[total++] = x;
        }
        return Arrays.copyOf(text, total);
    }
}
