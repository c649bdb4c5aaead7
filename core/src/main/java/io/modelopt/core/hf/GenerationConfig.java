package io.modelopt.core.hf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * The parts of a model's {@code generation_config.json} the engine uses: special ids and the
 * sampling defaults the model's authors recommend. Every boxed field is {@code null} when the file
 * (or the key) is absent — the caller's own defaults then apply.
 *
 * @param eosTokenIds {@code eos_token_id} (a number or a list in the file), empty when absent
 */
public record GenerationConfig(
        Integer bosTokenId,
        int[] eosTokenIds,
        Integer padTokenId,
        Double temperature,
        Double topP,
        Integer topK,
        Boolean doSample,
        Integer maxNewTokens,
        Integer maxLength,
        Double repetitionPenalty) {

    /** File name inside a model directory. */
    public static final String FILE_NAME = "generation_config.json";

    /** No generation config. */
    public static final GenerationConfig NONE = new GenerationConfig(null, new int[0], null, null, null, null, null, null, null, null);

    public GenerationConfig {
        eosTokenIds = eosTokenIds == null ? new int[0] : eosTokenIds.clone();
    }

    @Override public int[] eosTokenIds() { return eosTokenIds.clone(); }

    /**
     * Reads {@code dir/generation_config.json}, or {@link #NONE} when the file does not exist.
     *
     * @throws io.modelopt.core.ModelFormatException on bad JSON or a key of the wrong type
     */
    public static GenerationConfig load(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        return Files.isRegularFile(file) ? read(file) : NONE;
    }

    /** Reads one generation_config.json file. */
    public static GenerationConfig read(Path file) {
        JsonFields f = JsonFields.read(file);
        return new GenerationConfig(
                f.optInt("bos_token_id").orElse(null),
                f.optIntOrList("eos_token_id").orElse(new int[0]),
                f.optInt("pad_token_id").orElse(null),
                f.optDouble("temperature").orElse(null),
                f.optDouble("top_p").orElse(null),
                f.optInt("top_k").orElse(null),
                f.optBool("do_sample").orElse(null),
                f.optInt("max_new_tokens").orElse(null),
                f.optInt("max_length").orElse(null),
                f.optDouble("repetition_penalty").orElse(null));
    }

    @Override public boolean equals(Object o) {
        return o instanceof GenerationConfig g && Objects.equals(bosTokenId, g.bosTokenId) && Arrays.equals(eosTokenIds, g.eosTokenIds)
                && Objects.equals(padTokenId, g.padTokenId) && Objects.equals(temperature, g.temperature) && Objects.equals(topP, g.topP)
                && Objects.equals(topK, g.topK) && Objects.equals(doSample, g.doSample) && Objects.equals(maxNewTokens, g.maxNewTokens)
                && Objects.equals(maxLength, g.maxLength) && Objects.equals(repetitionPenalty, g.repetitionPenalty);
    }

    @Override public int hashCode() { return Objects.hash(bosTokenId, Arrays.hashCode(eosTokenIds), temperature, topP, topK); }

    @Override public String toString() {
        return "GenerationConfig[bos=" + bosTokenId + " eos=" + Arrays.toString(eosTokenIds) + " pad=" + padTokenId + " temperature=" + temperature
                + " top_p=" + topP + " top_k=" + topK + " do_sample=" + doSample + " max_new_tokens=" + maxNewTokens + " max_length=" + maxLength
                + " repetition_penalty=" + repetitionPenalty + "]";
    }
}
