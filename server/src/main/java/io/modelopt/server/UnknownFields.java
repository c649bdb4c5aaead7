package io.modelopt.server;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Request fields this server neither implements nor refuses: accepted, so that clients sending
 * optional extras keep working, and logged once per field name per process (not once per request).
 */
final class UnknownFields {
    private static final Logger log = LoggerFactory.getLogger(UnknownFields.class);
    private static final Set<String> seen = ConcurrentHashMap.newKeySet();

    private UnknownFields() {}

    static void note(Set<String> names) {
        for (String n : names) {
            if (seen.add(n)) log.info("request field '{}' is not implemented by this server; accepted and ignored (logged once)", n);
        }
    }
}
