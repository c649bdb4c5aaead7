package io.modelopt.cli.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelopt.core.json.Json;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The SVG is valid XML with its three labelled panels; Markdown, CSV and JSON say the same. */
class ReportOutputsTest {
    @TempDir Path dir;

    private static Document parse(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    /** The texts of the elements of class {@code cls} under {@code e}. */
    private static List<String> texts(Element e, String cls) {
        List<String> out = new ArrayList<>();
        NodeList nl = e.getElementsByTagNameNS("http://www.w3.org/2000/svg", "text");
        for (int i = 0; i < nl.getLength(); i++) {
            Element t = (Element) nl.item(i);
            if (t.getAttribute("class").equals(cls)) out.add(t.getTextContent());
        }
        return out;
    }

    private static Element panel(Document d, String id) {
        NodeList g = d.getElementsByTagNameNS("http://www.w3.org/2000/svg", "g");
        for (int i = 0; i < g.getLength(); i++) {
            Element e = (Element) g.item(i);
            if (e.getAttribute("id").equals(id)) return e;
        }
        return null;
    }

    @Test
    void svgParsesAndHasThreePanelsWithTitlesAndAxisLabelsWithUnits() throws Exception {
        for (boolean ppl : new boolean[] {false, true}) {
            Report report = Samples.report(Samples.fourStages(ppl), Bounds.NONE);
            Document d = parse(SvgChart.write(report));
            Element root = d.getDocumentElement();
            assertEquals("svg", root.getLocalName());
            int panels = 0;
            NodeList g = d.getElementsByTagNameNS("http://www.w3.org/2000/svg", "g");
            for (int i = 0; i < g.getLength(); i++) if (((Element) g.item(i)).getAttribute("class").equals("panel")) panels++;
            assertEquals(3, panels);

            Element memory = panel(d, "panel-memory"), speed = panel(d, "panel-speed"), quality = panel(d, "panel-quality");
            assertNotNull(memory);
            assertNotNull(speed);
            assertNotNull(quality);
            assertEquals(List.of("Memory by stage"), texts(memory, "panel-title"));
            assertEquals(List.of("memory (MiB)", "stage"), texts(memory, "axis-label"));
            assertEquals(List.of("Decode speed and TTFT by stage"), texts(speed, "panel-title"));
            assertEquals(List.of("decode (tokens/s)", "TTFT (ms)", "stage"), texts(speed, "axis-label"));
            assertEquals(List.of(ppl ? "Quality by stage: perplexity change" : "Quality by stage: KL divergence"), texts(quality, "panel-title"));
            assertEquals(List.of(ppl ? "perplexity change vs baseline (%)" : "mean KL vs baseline (nats)", "stage"), texts(quality, "axis-label"));
            // every stage is on every x axis; the missing one says so
            for (Element p : List.of(memory, speed, quality)) {
                List<String> stages = texts(p, "stage-label");
                assertTrue(stages.containsAll(List.of("stage 1", "stage 2", "stage 3", "stage 4")), stages.toString());
                assertEquals(List.of("n/a"), texts(p, "not-available"));
            }
            // three stacked parts per measured stage
            assertEquals(3 * 3, memory.getElementsByTagNameNS("http://www.w3.org/2000/svg", "title").getLength() - 3, "bar titles (plus 3 RSS marks)");
        }
    }

    @Test
    void withEveryStageMeasuredNoPanelSaysNotAvailableAndTheEnginesKvBarIsItsPool() throws Exception {
        Report report = Samples.report(Samples.fourMeasured(), Bounds.NONE);
        Document d = parse(SvgChart.write(report));
        for (String id : List.of("panel-memory", "panel-speed", "panel-quality")) {
            Element p = panel(d, id);
            assertEquals(List.of(), texts(p, "not-available"), id);
            assertTrue(texts(p, "stage-label").contains("stage 4"), id);
        }
        Element memory = panel(d, "panel-memory");
        assertEquals(4 * 3, memory.getElementsByTagNameNS("http://www.w3.org/2000/svg", "title").getLength() - 4, "bar titles (plus 4 RSS marks)");
        NodeList rects = memory.getElementsByTagNameNS("http://www.w3.org/2000/svg", "rect");
        double kv3 = -1, kv4 = -1;
        for (int i = 0; i < rects.getLength(); i++) {
            Element r = (Element) rects.item(i);
            if (r.getTextContent().startsWith("stage 3 KV")) kv3 = Double.parseDouble(r.getAttribute("height"));
            if (r.getTextContent().startsWith("stage 4 KV")) kv4 = Double.parseDouble(r.getAttribute("height"));
        }
        // Samples: stage 4's pool 32 MiB against stage 3's one-sequence cache of 8 MiB
        assertEquals(4.0, kv4 / kv3, 0.05);
    }

    @Test
    void memoryBarsAreStackedToScale() throws Exception {
        Report report = Samples.report(Samples.fourStages(false), Bounds.NONE);
        Document d = parse(SvgChart.write(report));
        Element memory = panel(d, "panel-memory");
        NodeList rects = memory.getElementsByTagNameNS("http://www.w3.org/2000/svg", "rect");
        double weights1 = -1, weights3 = -1;
        for (int i = 0; i < rects.getLength(); i++) {
            Element r = (Element) rects.item(i);
            String title = r.getTextContent();
            if (title.startsWith("stage 1 weights")) weights1 = Double.parseDouble(r.getAttribute("height"));
            if (title.startsWith("stage 3 weights")) weights3 = Double.parseDouble(r.getAttribute("height"));
        }
        // weights 288 and 88 MiB: heights in that ratio (to the 0.1 px the SVG writes)
        assertEquals(288.0 / 88.0, weights1 / weights3, 0.01);
    }

    @Test
    void markdownCsvAndJsonAgree() throws Exception {
        Report report = Samples.report(Samples.fourStages(true), new Bounds(250 * Samples.MIB, 10, Double.NaN));
        List<Path> files = ReportFiles.write(report, dir.resolve("out"));
        assertEquals(4, files.size());
        String md = Files.readString(dir.resolve("out/report.md"));
        String csv = Files.readString(dir.resolve("out/report.csv"));
        Map<String, Object> json = Json.parseObject(Files.readString(dir.resolve("out/report.json")));
        assertEquals(MarkdownTable.document(report), md);

        List<List<String>> rows = parseCsv(csv);
        List<String> header = rows.getFirst();
        @SuppressWarnings("unchecked") List<Map<String, Object>> stages = (List<Map<String, Object>>) json.get("stages");
        assertEquals(report.stages().size(), stages.size());
        assertEquals(report.stages().size() + 1, rows.size());
        List<String> mdRows = md.lines().filter(l -> l.startsWith("| ") && Character.isDigit(l.charAt(2))).toList();
        assertEquals(report.stages().size(), mdRows.size());
        for (int i = 0; i < stages.size(); i++) {
            Map<String, Object> js = stages.get(i);
            List<String> row = rows.get(i + 1);
            List<String> cells = Arrays.stream(mdRows.get(i).split("\\|")).map(String::strip).skip(1).toList();
            assertEquals(js.get("stage").toString(), row.get(header.indexOf("stage")));
            assertEquals(js.get("configuration"), row.get(header.indexOf("configuration")));
            if (!(Boolean) js.get("available")) {
                assertEquals(js.get("not_available"), row.get(header.indexOf("not_available")));
                assertEquals("", row.get(header.indexOf("decode_tokens_per_s_median")));
                assertTrue(cells.get(1).endsWith("(not available²)"), cells.get(1));
                assertTrue(md.contains("stage " + js.get("stage") + ": " + js.get("not_available")));
                continue;
            }
            @SuppressWarnings("unchecked") Map<String, Object> decode = (Map<String, Object>) js.get("decode_tokens_per_s");
            double med = ((Number) decode.get("median")).doubleValue(), min = ((Number) decode.get("min")).doubleValue(),
                    max = ((Number) decode.get("max")).doubleValue();
            assertEquals(med, Double.parseDouble(row.get(header.indexOf("decode_tokens_per_s_median"))));
            assertEquals(min, Double.parseDouble(row.get(header.indexOf("decode_tokens_per_s_min"))));
            assertEquals(max, Double.parseDouble(row.get(header.indexOf("decode_tokens_per_s_max"))));
            assertEquals(Format.spread(new Spread(med, min, max, 5)), cells.get(4));
            long weights = ((Number) js.get("weight_bytes")).longValue();
            assertEquals(weights, Long.parseLong(row.get(header.indexOf("weight_bytes"))));
            assertEquals(Format.mib(weights), cells.get(5));
            double kl = ((Number) js.get("mean_kl_nats")).doubleValue();
            assertEquals(kl, Double.parseDouble(row.get(header.indexOf("mean_kl_nats"))));
            assertEquals(Format.kl(kl), cells.get(11));
            double ppl = ((Number) js.get("perplexity")).doubleValue();
            assertEquals(ppl, Double.parseDouble(row.get(header.indexOf("perplexity"))));
            assertTrue(cells.contains(String.format(java.util.Locale.ROOT, "%.3f", ppl)), cells.toString());
            // the concurrency columns: the same figures in all three
            double tps = ((Number) js.get("concurrent8_tokens_per_s")).doubleValue();
            double mean = ((Number) js.get("concurrent8_mean_completion_s")).doubleValue(), p95 = ((Number) js.get("concurrent8_p95_completion_s")).doubleValue();
            double ttft = ((Number) js.get("concurrent8_p95_ttft_ms")).doubleValue();
            assertEquals(tps, Double.parseDouble(row.get(header.indexOf("concurrent8_tokens_per_s"))));
            assertEquals(p95, Double.parseDouble(row.get(header.indexOf("concurrent8_p95_completion_s"))));
            assertEquals(ttft, Double.parseDouble(row.get(header.indexOf("concurrent8_p95_ttft_ms"))));
            assertEquals(String.format(java.util.Locale.ROOT, "%.1f", tps), cells.get(cells.size() - 3));
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f / %.2f", mean, p95), cells.get(cells.size() - 2));
            assertEquals(String.format(java.util.Locale.ROOT, "%.0f", ttft), cells.get(cells.size() - 1));
            double kvPerToken = ((Number) js.get("kv_bytes_per_token")).doubleValue();
            assertEquals(kvPerToken, Double.parseDouble(row.get(header.indexOf("kv_bytes_per_token"))));
            assertEquals(String.format(java.util.Locale.ROOT, "%,.0f", kvPerToken), cells.get(cells.size() - 4));
        }
        @SuppressWarnings("unchecked") Map<String, Object> rec = (Map<String, Object>) json.get("recommendation");
        assertEquals(3L, rec.get("chosen_stage"));
        assertTrue(md.contains("Recommended: stage 3 (int4"), md);
        assertTrue(md.contains("¹ " + Report.CONCURRENT_NOTE), md);
    }

    @Test
    void markdownTableIsAligned() {
        String table = MarkdownTable.table(Samples.report(Samples.fourStages(false), Bounds.NONE));
        List<String> lines = table.lines().toList();
        assertEquals(2 + 4, lines.size());
        int width = lines.getFirst().length();
        for (String l : lines) assertEquals(width, l.length(), "every line the same width:\n" + table);
        assertTrue(lines.get(1).matches("\\|[ \\-:|]+\\|"), lines.get(1));
    }

    /** RFC 4180 as CsvWriter writes it: quoted fields may hold commas and doubled quotes. */
    static List<List<String>> parseCsv(String csv) {
        List<List<String>> rows = new ArrayList<>();
        List<String> row = new ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < csv.length(); i++) {
            char c = csv.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < csv.length() && csv.charAt(i + 1) == '"') { f.append('"'); i++; }
                else if (c == '"') quoted = false;
                else f.append(c);
            } else if (c == '"') quoted = true;
            else if (c == ',') { row.add(f.toString()); f.setLength(0); }
            else if (c == '\r') { /* CRLF */ }
            else if (c == '\n') { row.add(f.toString()); f.setLength(0); rows.add(row); row = new ArrayList<>(); }
            else f.append(c);
        }
        return rows;
    }
}
