package io.modelopt.core.tokenizer;

/**
 * One entry of tokenizer.json's {@code added_tokens}: a string matched in the input before the
 * model sees it.
 *
 * @param id         token id
 * @param content    the string
 * @param special    a special token (skipped when decoding with skipSpecial; matched only when parsing specials)
 * @param normalized matched against the normalized text (with its content normalized too) instead of the raw input
 * @param lstrip     the match swallows whitespace on its left
 * @param rstrip     the match swallows whitespace on its right
 * @param singleWord matched only when not inside a word
 */
record AddedToken(int id, String content, boolean special, boolean normalized, boolean lstrip, boolean rstrip, boolean singleWord) {}
