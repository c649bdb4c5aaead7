package io.modelopt.core.model.llama;

import io.modelopt.core.json.Json;
import io.modelopt.core.testing.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The llama.cpp / float64 reference results of a fixture model ({@code reference.json},
 * {@code reference_logits.json}; see the fixtures' README).
 */
record ReferenceFixture(String model, List<Prompt> prompts) {

    /** One generation of a prompt: its greedy ids and the top-5 (id, logit) at the last prompt position. */
    record Generation(int[] genIds, int[] top5Ids, double[] top5Logits) {}

    /**
     * @param llamaCpp  llama.cpp on the f32 GGUF (F32 KV cache)
     * @param reference the float64 numpy forward of hf/
     * @param logits    all logits at the last prompt position, float64 reference
     * @param quantized llama.cpp on each quantized GGUF, by file name
     */
    record Prompt(String text, int[] ids, Generation llamaCpp, Generation reference, double[] logits, Map<String, Generation> quantized) {}

    static ReferenceFixture load(String model) {
        Path dir = Fixtures.file(model);
        Map<String, Object> ref = Json.parseObject(read(dir.resolve("reference.json")));
        Map<String, Object> full = Json.parseObject(read(dir.resolve("reference_logits.json")));
        List<Prompt> prompts = new ArrayList<>();
        List<?> ps = (List<?>) ref.get("prompts"), ls = (List<?>) full.get("prompts");
        for (int i = 0; i < ps.size(); i++) {
            Map<?, ?> p = (Map<?, ?>) ps.get(i), l = (Map<?, ?>) ls.get(i);
            if (!p.get("prompt").equals(l.get("prompt"))) throw new IllegalStateException("reference files disagree on prompt " + i);
            Map<String, Generation> quant = new LinkedHashMap<>();
            ((Map<?, ?>) p.get("llama_cpp_quantized")).forEach((k, v) -> quant.put((String) k, generation((Map<?, ?>) v)));
            prompts.add(new Prompt((String) p.get("prompt"), ints((List<?>) p.get("prompt_ids")), generation((Map<?, ?>) p.get("llama_cpp")),
                    generation((Map<?, ?>) p.get("reference")), doubles((List<?>) l.get("logits")), quant));
        }
        return new ReferenceFixture(model, prompts);
    }

    private static Generation generation(Map<?, ?> g) {
        List<?> top = (List<?>) g.get("top5_logits_last_prompt_pos");
        int[] ids = new int[top.size()];
        double[] logits = new double[top.size()];
        for (int i = 0; i < top.size(); i++) {
            List<?> pair = (List<?>) top.get(i);
            ids[i] = ((Number) pair.get(0)).intValue();
            logits[i] = ((Number) pair.get(1)).doubleValue();
        }
        return new Generation(ints((List<?>) g.get("gen_ids")), ids, logits);
    }

    static int[] ints(List<?> l) {
        int[] a = new int[l.size()];
        for (int i = 0; i < a.length; i++) a[i] = ((Number) l.get(i)).intValue();
        return a;
    }

    static double[] doubles(List<?> l) {
        double[] a = new double[l.size()];
        for (int i = 0; i < a.length; i++) a[i] = ((Number) l.get(i)).doubleValue();
        return a;
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
