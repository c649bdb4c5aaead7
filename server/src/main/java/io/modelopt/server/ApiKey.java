package io.modelopt.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The {@code Authorization: Bearer} check. Both keys are hashed before the comparison, so that
 * {@link MessageDigest#isEqual}'s constant time holds whatever the lengths (it returns early on a
 * length mismatch, which would tell an attacker the key's length).
 */
final class ApiKey {
    private final byte[] expected;

    ApiKey(String key) { this.expected = sha256(key); }

    /** Whether the header carries the key. */
    boolean accepts(String authorizationHeader) {
        String given = "";
        if (authorizationHeader != null && authorizationHeader.regionMatches(true, 0, "Bearer ", 0, 7)) given = authorizationHeader.substring(7).strip();
        return MessageDigest.isEqual(expected, sha256(given)) & !given.isEmpty();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
