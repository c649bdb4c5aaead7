package io.modelopt.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Jinja subset, piece by piece; expected values are what Jinja2 (trim_blocks, lstrip_blocks) renders. */
class JinjaSubsetTest {
    private static final List<ChatMessage> MSGS = List.of(ChatMessage.system("S"), ChatMessage.user("U1"), ChatMessage.assistant("A1"), ChatMessage.user("U2"));

    private static String render(String template) { return render(template, Map.of()); }

    private static String render(String template, Map<String, Object> vars) {
        return ChatTemplate.parse(template).withSpecialTokens("<s>", "</s>").render(MSGS, true, vars);
    }

    private static ChatTemplateException syntaxError(String template) {
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> ChatTemplate.parse(template));
        assertEquals(ChatTemplateException.Kind.SYNTAX, e.kind());
        return e;
    }

    // ---- whitespace ----

    @Test
    void trimBlocksRemovesTheNewlineAfterABlockTagOnly() {
        assertEquals("a\nb\n", render("{% if true %}\na\n{% endif %}\nb\n\n"));   // one trailing newline of the source dropped
        assertEquals("x\ny", render("{{ 'x' }}\ny"));                               // not after {{ }}
        assertEquals("ab", render("{# note #}\na{# c #}\nb"));                       // comments trim too
        assertEquals("\na", render("{% if true +%}\na{% endif %}"));                 // +%} keeps it
    }

    @Test
    void lstripBlocksRemovesIndentBeforeBlockTagsNotBeforeExpressions() {
        assertEquals("a\n", render("  {% if true %}\na\n  {% endif %}"));
        assertEquals("  x", render("  {{ 'x' }}"));
        assertEquals("b   ", render("b   {% if true %}{% endif %}"));          // not at line start: kept
        assertEquals("  a", render("  {%+ if true %}a{% endif %}"));           // {%+ keeps it
        assertEquals("\tz\n", render("{% for x in [1] %}\n\t{{ 'z' }}\n    {% endfor %}"));
    }

    @Test
    void minusStripsAllWhitespaceOnItsSide() {
        assertEquals("ab", render("a  \n\n  {%- if true -%}  \n\n  b{%- endif %}"));
        assertEquals("[x]", render("[ \n {{- 'x' -}} \n ]"));
    }

    @Test
    void crlfIsNormalizedAndRawIsText() {
        assertEquals("a\nb", render("a\r\nb\r\n"));
        assertEquals("{{ x }}{% if %}", render("{% raw %}{{ x }}{% if %}{% endraw %}"));
    }

    // ---- loops and scoping ----

    @Test
    void loopVariables() {
        assertEquals("1/0/4/T/F|2/1/4/F/F|3/2/4/F/F|4/3/4/F/T|",
                render("{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.length }}/{{ 'T' if loop.first else 'F' }}/{{ 'T' if loop.last else 'F' }}|{% endfor %}"));
        assertEquals("3210", render("{% for m in messages %}{{ loop.revindex0 }}{% endfor %}"));
        assertEquals("ab ab", render("{% for x in [1, 2] %}{{ loop.cycle('a', 'b') }}{% endfor %} {% for x in [1, 2] %}{{ loop.cycle('a', 'b') }}{% endfor %}"));
        assertEquals("-U1U2", render("{% for m in messages if m.role == 'user' %}{% if loop.first %}-{% endif %}{{ m.content }}{% endfor %}"));
        assertEquals("none", render("{% for x in [] %}x{% else %}none{% endfor %}"));
        assertEquals("a=1,b=2,", render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}"));
        assertEquals("12", render("{% for x in [1, 2, 3, 4] %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"));
        assertEquals("134", render("{% for x in [1, 2, 3, 4] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}"));
    }

    @Test
    void setInsideALoopDoesNotLeakButNamespaceDoes() {
        assertEquals("0|1|0|2|0", render("{% set x = 0 %}{% for i in [1, 2] %}{{ x }}|{% set x = i %}{{ x }}|{% endfor %}{{ x }}"));
        assertEquals("True 2", render("{% set ns = namespace(found=false, n=0) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.found = true %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}"));
        assertEquals("yes", render("{% if true %}{% set y = 'yes' %}{% endif %}{{ y }}"));   // if shares the scope
        assertEquals("a,b", render("{% set a, b = 'a', 'b' %}{{ a }},{{ b }}"));
        assertEquals("[x]", render("{% set block %}[{{ 'x' }}]{% endset %}{{ block }}"));
    }

    @Test
    void filterBlocks() {
        assertEquals("[AB C]", render("[{% filter trim | upper %}\n  ab {{ 'c' }}  \n{% endfilter %}]"));
    }

    @Test
    void richerMessagesAsMaps() {
        Map<String, Object> call = Map.of("role", "assistant", "content", "", "tool_calls", List.of(Map.of("id", "c1")));
        String out = ChatTemplate.parse("{% for m in messages %}{{ m.role }}:{{ m.tool_calls[0].id if m.tool_calls is defined else m.content }};{% endfor %}")
                .renderMessages(List.of(ChatMessage.user("q"), call), false, Map.of());
        assertEquals("user:q;assistant:c1;", out);
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> ChatTemplate.parse("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").render(List.of(), false));
        assertTrue(e.problem().contains("recursion"), e.problem());
    }

    @Test
    void macros() {
        assertEquals("<U1><U2>!", render("{% macro tag(x, end='>') %}<{{ x }}{{ end }}{% endmacro %}{{ tag('U1') }}{{ tag('U2') }}{{ tag('', end='!')[1:] }}"));
    }

    // ---- expressions ----

    @Test
    void literalsOperatorsAndPrecedence() {
        assertEquals("a\tb'\"\\ é", render("{{ 'a\\tb\\'\"\\\\ \\u00e9' }}"));
        assertEquals("7 2.5 2 1 8 -3 ab abab", render("{{ 1 + 2 * 3 }} {{ 5 / 2 }} {{ 5 // 2 }} {{ 7 % 3 }} {{ 2 ** 3 }} {{ -3 }} {{ 'a' ~ 'b' }} {{ 'ab' * 2 }}"));
        assertEquals("True False True True", render("{{ 1 < 2 <= 2 }} {{ 1 == 2 }} {{ 'b' in 'abc' }} {{ 3 not in [1, 2] }}"));
        assertEquals("True None [1, 'a', None] {'k': True}", render("{{ true }} {{ none }} {{ [1, 'a', none] }} {{ {'k': True} }}"));
        assertEquals("x y", render("{{ 'x' if 1 > 0 else 'z' }} {{ 'n' if false else 'y' }}"));
        assertEquals("False b", render("{{ 0 or false and 1 }} {{ '' or 'b' }}"));
        assertEquals("ab-c", render("{{ 'a' + 'b' ~ '-' + 'c' }}"));
        assertEquals("ab", render("{{ 'a' 'b' }}"));   // adjacent literals join
        assertEquals("1.0 0.1 1e-05 1e+16", render("{{ 1.0 }} {{ 0.1 }} {{ 0.00001 }} {{ 1e16 }}"));
    }

    @Test
    void subscriptsSlicesAndAttributes() {
        assertEquals("system S U2 U2", render("{{ messages[0]['role'] }} {{ messages[0].content }} {{ messages[-1].content }} {{ (messages | last).content }}"));
        assertEquals("3 U1 A1", render("{% set rest = messages[1:] %}{{ rest | length }} {{ rest[0].content }} {{ messages[1:3][1].content }}"));
        assertEquals("cba bc [3, 1]", render("{{ 'abc'[::-1] }} {{ 'abc'[1:] }} {{ [1, 2, 3][::-2] }}"));
    }

    @Test
    void filters() {
        assertEquals("x|X|x|2|a, b|1|3|d", render("{{ '  x ' | trim }}|{{ 'x' | upper }}|{{ 'X' | lower }}|{{ [1, 2] | length }}|{{ ['a', 'b'] | join(', ') }}|{{ [1, 2, 3] | first }}|{{ [1, 2, 3] | last }}|{{ undefined_var | default('d') }}"));
        assertEquals("{\"a\": [1, 2.5, null, true], \"b\": \"é\\n\\\"\"}", render("{{ {'a': [1, 2.5, none, true], 'b': 'é\\n\"'} | tojson }}"));
        assertEquals("{\n  \"a\": [\n    1\n  ]\n}", render("{{ {'a': [1]} | tojson(indent=2) }}"));
        assertEquals("U1,U2", render("{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }}"));
        assertEquals("2", render("{{ messages | rejectattr('role', 'equalto', 'user') | list | length }}"));
        assertEquals("Hello World|3|e", render("{{ 'hello world' | title }}|{{ '3' | int }}|{{ '' | default('e', true) }}"));
        assertEquals("a\n    b", render("{{ 'a\\nb' | indent(4) }}"));
    }

    @Test
    void stringAndDictMethods() {
        assertEquals("x|True|False|['a', 'b', 'c']|['a', 'b,c']|Ab|2", render("{{ ' x '.strip() }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'y')) }}|{{ 'a b  c'.split() }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'ab'.capitalize() }}|{{ 'a-b-c'.count('-') }}"));
        assertEquals("1 d ['k']", render("{% set d = {'k': 1} %}{{ d.get('k') }} {{ d.get('x', 'd') }} {{ d.keys() | list }}"));
    }

    @Test
    void tests() {
        assertEquals("TFTTFTTF", render("{{ 'T' if x is not defined else 'F' }}{{ 'T' if messages is undefined else 'F' }}{{ 'T' if none is none else 'F' }}"
                + "{{ 'T' if 'a' is string else 'F' }}{{ 'T' if 1 is string else 'F' }}{{ 'T' if 4 is divisibleby 2 else 'F' }}{{ 'T' if 3 is odd else 'F' }}{{ 'T' if {} is not mapping else 'F' }}"));
        // `not x is defined` is `not (x is defined)`; a conditional's else may hold another conditional
        assertEquals("F", render("{{ 'T' if not add_generation_prompt is defined else 'F' if add_generation_prompt else 'X' }}"));
    }

    // ---- undefined ----

    @Test
    void undefinedRendersEmptyIsFalsyAndFailsInArithmetic() {
        assertEquals("[]|F|0|", render("[{{ nothing }}]|{{ 'T' if nothing else 'F' }}|{{ nothing | length }}|{% for x in nothing %}x{% endfor %}"));
        assertEquals("[]", render("[{{ messages[0].nothing }}{{ messages[99] }}]"));
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> render("\n{{ 'a' + nothing }}"));
        assertEquals(ChatTemplateException.Kind.RENDER, e.kind());
        assertEquals(2, e.line());
        assertTrue(e.getMessage().contains("'nothing' is undefined"), e.getMessage());
        e = assertThrows(ChatTemplateException.class, () -> render("{{ nothing.attr }}"));
        assertTrue(e.getMessage().contains("'nothing' is undefined"), e.getMessage());
        e = assertThrows(ChatTemplateException.class, () -> render("{{ messages[0].missing + 1 }}"));
        assertTrue(e.getMessage().contains("'dict object' has no attribute 'missing'"), e.getMessage());
    }

    // ---- variables and functions ----

    @Test
    void providedVariablesAndExtras() {
        assertEquals("<s>|</s>|True|None|4", render("{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ tools }}|{{ messages | length }}"));
        Map<String, Object> tools = new LinkedHashMap<>();
        tools.put("tools", List.of(Map.of("name", "f")));
        tools.put("n", 3);
        tools.put("bos_token", "<B>");
        assertEquals("f 3 <B>", render("{{ tools[0].name }} {{ n }} {{ bos_token }}", tools));
        assertThrows(IllegalArgumentException.class, () -> render("x", Map.of("messages", List.of())));
        assertEquals("0,1,2|2,4", render("{{ range(3) | join(',') }}|{{ range(2, 6, 2) | join(',') }}"));
        ChatTemplate t = ChatTemplate.parse("{{ strftime_now('%d %b %Y') }}").withClock(Clock.fixed(Instant.parse("2024-07-26T10:00:00Z"), ZoneOffset.UTC));
        assertEquals("26 Jul 2024", t.render(List.of(), false));
    }

    @Test
    void raiseExceptionCarriesTheTemplatesMessage() {
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> render("{% for m in messages %}\n{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% endfor %}"));
        assertTrue(e.raisedByTemplate());
        assertEquals("System role not supported", e.getMessage());
        assertEquals(2, e.line());
    }

    // ---- syntax errors ----

    @Test
    void syntaxErrorsNamePositionAndProblem() {
        ChatTemplateException e = syntaxError("ab\n{% if x %}\nc");
        assertEquals(2, e.line());
        assertEquals(4, e.column());
        assertTrue(e.getMessage().contains("'{% endif %}'"), e.getMessage());
        assertTrue(e.getMessage().startsWith("chat template syntax error at line 2, column 4: "), e.getMessage());

        e = syntaxError("{{ 1 + }}");
        assertEquals(1, e.line());
        assertEquals(8, e.column());
        assertTrue(e.problem().contains("'}}'"), e.problem());

        e = syntaxError("x {% include 'a' %}");
        assertTrue(e.problem().contains("unknown or unsupported tag 'include'"), e.problem());
        e = syntaxError("{% endfor %}");
        assertTrue(e.problem().contains("endfor"), e.problem());
        e = syntaxError("{{ 'abc }}");
        assertTrue(e.problem().contains("never closed"), e.problem());
        e = syntaxError("{{ x ");
        assertTrue(e.problem().contains("'{{' is never closed"), e.problem());
        e = syntaxError("{% break %}");
        assertTrue(e.problem().contains("outside of a for loop"), e.problem());
        e = syntaxError("{% for x in y %}{% if a %}{% endfor %}");
        assertEquals("unexpected '{% endfor %}': the innermost open block is 'if' at line 1, column 20, which needs '{% elif %}' or '{% else %}' or '{% endif %}' first", e.problem());
        e = syntaxError("{{ a $ b }}");
        assertEquals(6, e.column());
    }

    @Test
    void unknownFilterIsARenderError() {
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> render("{{ 'a' | nosuch }}"));
        assertEquals(ChatTemplateException.Kind.RENDER, e.kind());
        assertTrue(e.problem().contains("unknown filter 'nosuch'"));
        assertFalse(e.raisedByTemplate());
    }
}
