package io.modelopt.core.model;

import java.util.Optional;

/** The model families the engine runs, with their GGUF {@code general.architecture} and HF class names. */
public enum Architecture {
    LLAMA("llama", "LlamaForCausalLM"),
    MISTRAL("llama", "MistralForCausalLM"),
    QWEN2("qwen2", "Qwen2ForCausalLM");

    private final String ggufName;
    private final String hfClass;

    Architecture(String ggufName, String hfClass) {
        this.ggufName = ggufName;
        this.hfClass = hfClass;
    }

    /** The {@code general.architecture} value (Mistral GGUFs are written as "llama"). */
    public String ggufName() { return ggufName; }

    /** The {@code architectures[0]} of an HF config.json. */
    public String hfClass() { return hfClass; }

    public static Optional<Architecture> fromHfClass(String name) {
        for (Architecture a : values()) if (a.hfClass.equals(name)) return Optional.of(a);
        return Optional.empty();
    }

    public static Optional<Architecture> fromGguf(String name) {
        for (Architecture a : values()) if (a.ggufName.equals(name)) return Optional.of(a);
        return Optional.empty();
    }
}
