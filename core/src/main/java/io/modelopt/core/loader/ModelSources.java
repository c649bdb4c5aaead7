package io.modelopt.core.loader;

import io.modelopt.core.ModelFormatException;
import io.modelopt.core.gguf.GgufModelSource;
import io.modelopt.core.hf.HfModelSource;
import io.modelopt.core.model.ModelSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Opens a model from a path: a GGUF file, or a Hugging Face model directory (config.json + safetensors). */
public final class ModelSources {
    private ModelSources() {}

    public static ModelSource open(Path path) throws IOException {
        if (!Files.exists(path)) throw new NoSuchFileException(path.toString());
        if (Files.isDirectory(path)) {
            if (!Files.isRegularFile(path.resolve("config.json"))) {
                throw new ModelFormatException(path, "a model directory needs a config.json (Hugging Face layout)");
            }
            return HfModelSource.open(path);
        }
        if (isGguf(path)) return GgufModelSource.open(path);
        if (path.getFileName().toString().equals("config.json") || path.getFileName().toString().endsWith(".safetensors")) {
            return HfModelSource.open(path.toAbsolutePath().getParent());
        }
        throw new ModelFormatException(path, 0, "not a GGUF file (no 'GGUF' magic) and not a Hugging Face model directory");
    }

    private static boolean isGguf(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] magic = in.readNBytes(4);
            return magic.length == 4 && magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U' && magic[3] == 'F';
        }
    }
}
