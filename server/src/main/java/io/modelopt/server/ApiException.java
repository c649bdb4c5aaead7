package io.modelopt.server;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request the server answers with an OpenAI error body,
 * {@code {"error": {"message", "type", "param", "code"}}}, and an HTTP status.
 */
final class ApiException extends RuntimeException {
    final int status;
    final String type, param, code;
    /** Extra response headers (Retry-After). */
    final Map<String, String> headers;

    ApiException(int status, String type, String code, String param, String message, Map<String, String> headers) {
        super(message);
        this.status = status;
        this.type = type;
        this.code = code;
        this.param = param;
        this.headers = Map.copyOf(headers);
    }

    /** 400: a field is missing, malformed, of the wrong type or out of range; {@code param} names it. */
    static ApiException badRequest(String param, String message) {
        return new ApiException(400, "invalid_request_error", "invalid_value", param, message, Map.of());
    }

    /** 400 for a field this server does not implement. */
    static ApiException unsupported(String param, String message) {
        return new ApiException(400, "invalid_request_error", "unsupported_parameter", param, message, Map.of());
    }

    static ApiException unauthorized() {
        return new ApiException(401, "invalid_request_error", "invalid_api_key", null,
                "missing or wrong API key: send the header 'Authorization: Bearer <key>' with the key the server was started with", Map.of());
    }

    static ApiException notFound(String message) {
        return new ApiException(404, "invalid_request_error", "not_found", null, message, Map.of());
    }

    static ApiException modelNotFound(String requested, String served) {
        return new ApiException(404, "invalid_request_error", "model_not_found", "model",
                "the model '" + requested + "' does not exist: this server serves '" + served + "'", Map.of());
    }

    static ApiException methodNotAllowed(String method, String path, String allowed) {
        return new ApiException(405, "invalid_request_error", "method_not_allowed", null,
                method + " is not allowed on " + path + "; use " + allowed, Map.of("Allow", allowed));
    }

    static ApiException timeout(java.time.Duration limit) {
        return new ApiException(408, "timeout_error", "request_timeout", null,
                "the request did not finish within the server's request timeout of " + limit.toMillis() / 1000.0 + " s", Map.of());
    }

    static ApiException tooLarge(long limit) {
        return new ApiException(413, "invalid_request_error", "request_too_large", null,
                "the request body exceeds the server's limit of " + limit + " bytes", Map.of("Connection", "close"));
    }

    static ApiException queueFull(String message) {
        return new ApiException(429, "rate_limit_error", "rate_limit_exceeded", null, message, Map.of("Retry-After", "1"));
    }

    static ApiException unavailable(String message) {
        return new ApiException(503, "server_error", "service_unavailable", null, message, Map.of("Retry-After", "5"));
    }

    static ApiException internal(String message) {
        return new ApiException(500, "server_error", "internal_error", null, message, Map.of());
    }

    /** The error object as OpenAI writes it. */
    Map<String, Object> body() { return body(getMessage(), type, param, code); }

    static Map<String, Object> body(String message, String type, String param, String code) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("message", message);
        e.put("type", type);
        e.put("param", param);
        e.put("code", code);
        return Map.of("error", e);
    }
}
