#!/usr/bin/env python3
"""Writes core/src/test/resources/io/modelopt/core/chat/jinja2-renders.json: what Jinja2 renders for
the chat-template test resources and for a list of small templates, in the environment transformers
renders chat templates with (transformers/utils/chat_template_utils.py _compile_jinja_template:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with loopcontrols, its own
tojson (json.dumps, ensure_ascii=False), raise_exception, strftime_now; render(messages=...,
tools=None, documents=None, add_generation_prompt=..., bos_token=..., eos_token=...)).
strftime_now is pinned to 2024-07-26 12:00 so that the output is reproducible.

Needs Python 3 with jinja2 (written with Jinja2 3.1.6, MarkupSafe 3.0.3). Run from the repository root:
    python3 scripts/chat-template-oracle.py
Jinja2ReferenceTest compares our renderer with the file."""
import glob, json, os
from datetime import datetime
import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

RES = "core/src/test/resources/io/modelopt/core/chat"

def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

ENV = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
ENV.filters["tojson"] = tojson
ENV.globals["raise_exception"] = raise_exception
ENV.globals["strftime_now"] = lambda fmt: datetime(2024, 7, 26, 12, 0, 0).strftime(fmt)

cases = json.load(open(f"{RES}/llama-cpp-chat-templates.json", encoding="utf-8"))
CONVERSATIONS = {
    "six": [{"role": r, "content": c} for r, c in cases["conversation"]],
    "short": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "Who are you"}],
}
CONVERSATIONS["four"] = CONVERSATIONS["six"][:4]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "description": "the city"}}, "required": ["city"]}}}]

# small templates for the corners: whitespace control, scoping, operators, filters, tests, methods;
# then one expression per template (number formatting, repr, filters and tests on each type)
SNIPPETS = [
    "{% if true %}\na\n{% endif %}\nb\n\n",
    "  {% if true %}\n  a\n  {% endif %}\n  {{ 'x' }}\n\t{# c #}\n y",
    "a  \n\n  {%- if true -%}  \n\n  b{%- endif %}  c {{- ' d ' -}}  e",
    "{% for m in messages %}\n    {% if m.role == 'user' %}\n        {{ m.content }}\n    {% endif %}\n{% endfor %}",
    "{%- for m in messages %}\n  {{- m.role }}: {{ m.content }}\n{% endfor -%}\nEND",
    "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}|{% set x = i %}{{ x }}|{% endfor %}{{ x }}",
    "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + loop.index %}{% endfor %}{{ ns.n }}",
    "{% for m in messages if m.role != 'system' %}{{ loop.index }}/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}/{{ loop.revindex }} {% endfor %}",
    "{{ 1 + 2 * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1.5 * 2 }} {{ 0.1 + 0.2 }} {{ 1e-7 }} {{ 3.0 }}",
    "{{ 0 or false and 1 }} {{ '' or 'b' }} {{ none }} {{ [1, 'a', none, true, 2.5] }} {{ {'k': 'v', 'n': none} }} {{ 'it\\'s' }} {{ [\"it's\"] }}",
    "{{ 'x' if 1 > 2 }}|{{ messages[0].nothing }}|{{ nothing }}|{{ nothing | default('d') }}|{{ '' | default('e', true) }}",
    "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(', ') }}|{{ messages | rejectattr('role', 'equalto', 'user') | list | length }}",
    "{{ {'b': [1, {'c': none}], 'a': 'é\\n\"\\\\'} | tojson }}|{{ {'a': [1, []], 'b': {}} | tojson(indent=2) }}",
    "{{ '  x  ' | trim }}|{{ 'ab' | upper }}|{{ 'hello wORLD' | title }}|{{ 'hello wORLD'.title() }}|{{ 'abc' | reverse }}|{{ [3, 1, 2] | sort }}|{{ ['b', 'A', 'a'] | sort }}",
    "{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a-b-c'.rsplit('-', 1) }}|{{ 'abc'.startswith(('x', 'a')) }}|{{ 'xyx'.strip('x') }}|{{ 'a'.replace('a', 'b') }}",
    "{{ 'abcdef'[1:4] }}|{{ 'abcdef'[::-2] }}|{{ [1, 2, 3, 4][-2:] }}|{{ messages[-1].content }}|{{ messages[1:] | length }}|{{ (messages | first).role }}",
    "{{ 'T' if x is not defined }}{{ 'T' if none is none }}{{ 'T' if 'a' is string }}{{ 'T' if 4 is divisibleby 2 }}{{ 'T' if 3 is odd }}{{ 'T' if {} is mapping }}{{ 'T' if [] is iterable }}{{ 'T' if 1 is number }}",
    "{% macro f(a, b='B') %}[{{ a }}{{ b }}]{% endmacro %}{{ f(1) }}{{ f(2, 'x') }}{{ f(3, b=4) }}",
    "{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "{% for k, v in {'a': 1, 'b': [2]}.items() %}{{ k }}={{ v }};{% endfor %}{% for x in [] %}x{% else %}empty{% endfor %}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c %}  captured {{ a }}  {% endset %}[{{ c }}]{% filter upper %}up {{ b }}{% endfilter %}",
    "{{ 1 < 2 < 3 }} {{ 'b' in 'abc' }} {{ 2 not in [1, 3] }} {{ 'k' in {'k': 1} }} {{ 1 == 1.0 }} {{ true == 1 }} {{ [1, [2]] == [1, [2]] }} {{ 'a' ~ 1 ~ none }}",
    "{%- set loop_messages = messages -%}\n{%- if loop_messages[0]['role'] == 'system' -%}\n    {%- set sys = loop_messages[0]['content'] -%}\n{%- endif -%}\n{{- sys -}}\n{%- for m in loop_messages[1:] %}\n<{{ m.role }}>\n{%- endfor %}",
    "{{ raise_exception('no: ' ~ messages | length) }}",
    "{{ 'a' + nothing }}",
    "{{ nothing.attr }}",
    "{{ messages | length + 1 }} {{ -messages | length }} {{ not messages }}",
    "x{%+ if true %}y{% endif +%}\nz",
    "{% raw %}{{ not rendered }}{% endraw %}\n{{ 'after' }}",
    "{{ 'x' }}\r\n{% if true %}\r\ny\r\n{% endif %}\r\n",
]

EXPRESSIONS = r"""
1/3
2/2
-0.0
1e100
123456789.123
0.0001
0.00001
1.5e-10
[1.0, 2.5e20]
'a\nb' ~ ''
['a\nb', "it's", 'x"y', "a'b\"c"]
{'a': {'b': [1, (2, 3)]}}
(1, 2)
()
(1,)
[]|length
'héllo'|length
'héllo'|upper
'ß'.upper()
'  a b  '|trim
'abc'[5]
'abc'[-1]
'abc'[1:100]
[1,2,3,4,5][::2]
[1,2,3,4,5][-1:0:-1]
[1,2,3,4,5][10:]
'abc'|first
'abc'|last
[]|first
'a' < 'b'
[1, 2] < [1, 3]
1 < 2.5
none == none
none is none
0 == false
'' == false
1 in [true]
'a' * 3
[1] * 2
3 * 'ab'
7 % -3
-7 % 3
7.5 % 2
7 // -2
2 ** -1
2 ** 0.5
10 / 4
true + 1
true and 'x'
false or none
not 0
not ''
'x' if none
'a' ~ none ~ true ~ 1.0
[1, 2]|join
[1, 'a', none]|join('-')
{'a': 1}|length
{'b': 1, 'a': 2}|list
{'b': 1, 'a': 2}.items()|list
{'b': 1, 'a': 2}|items|list
[3, 1, 2]|sort(reverse=true)
['b', 'a']|sort|join
[1, 2, 2, 3, 1]|unique|list
[1, 2, 3]|sum
[1, 2, 3]|max
['a', 'B']|min
-3|abs
'12'|int + 1
'x'|int
'3.5'|float
3.7|int
2.5|round
3.14159|round(2)
'a b c'|wordcount
'Hello World'|lower
'hello'|capitalize
'hello world'|title
"they're here"|title
"they're here".title()
'a-b'|title
'x'|replace('x', 'y')
'aaa'|replace('a', 'b', 2)
'a,b'.split(',')
'a b'.split(' ', 1)
' x '.lstrip()
' x '.rstrip()
'abc'.find('c')
'abc'.count('')
'ABC'.isupper()
'abc'.islower()
'123'.isdigit()
'a\nb\n'.splitlines()
', '.join(['a', 'b'])
'%s' % 1
range(3)|list
range(1, 10, 3)|list
range(5, 0, -2)|list
namespace(a=1).a
dict(a=1, b=2)
{'a': 1}.get('b')
{'a': 1}.get('b', 2)
{'a': 1}.keys()|list
{'a': 1}.values()|list
[1, 2, 3]|select('odd')|list
[1, 2, 3]|reject('odd')|list
[1, 2, 3]|map('string')|join('|')
[{'a': 1}, {'b': 2}]|map(attribute='a')|list
[{'a': 1}, {'a': 2}]|selectattr('a', 'gt', 1)|list
[{'a': 1}, {}]|selectattr('a')|list
[{'a': 1}, {}]|selectattr('a', 'defined')|list
'x'|indent(2)
'a\nb\n\nc'|indent(2, true)
'a\nb\n\nc'|indent(2, blank=true)
none|string
none|default('d')
none|default('d', true)
undefined_thing|default('d')
'<&>'|escape
[1, 2]|reverse|list
'abc'|reverse
'abc'|list
{'a': [1, 2]}|tojson
'é'|tojson
[1.5, 2, true, none]|tojson
{'z': 1, 'a': 2}|tojson(sort_keys=true)
'\u2028'|tojson
1 is number
1.5 is float
1 is integer
true is boolean
true is number
'a' is sequence
{} is sequence
none is string
1 is even
2 is divisibleby(2)
1 is eq 1
1 is ne 2
2 is gt 1
'a' is in 'abc'
[] is iterable
'a' is lower
'A' is upper
x is undefined
loop is defined
""".strip().split("\n")

def job(name, template, conversation, agp, bos, eos, tools, ref):
    j = {"name": name, **ref, "conversation": conversation, "add_generation_prompt": agp, "bos_token": bos, "eos_token": eos, "tools": tools}
    kw = {"tools": TOOLS if tools else None, "documents": None, "bos_token": bos, "eos_token": eos}
    try:
        j["expected"] = ENV.from_string(template).render(messages=CONVERSATIONS[conversation], add_generation_prompt=agp, **kw)
    except jinja2.exceptions.TemplateError as e:
        j["error"] = type(e).__name__ + ": " + str(e)
    except Exception as e:
        j["error"] = type(e).__name__ + ": " + str(e)
    return j

jobs = []
for c in cases["cases"]:
    jobs.append(job("case " + c["name"], c["template"], "six", True, c["bos_token"], c["eos_token"], False, {"case": c["name"]}))
for f in sorted(glob.glob(f"{RES}/llama-cpp-models-templates/*.jinja")):
    n = os.path.basename(f)
    t = open(f, encoding="utf-8").read()
    jobs.append(job("tools " + n, t, "short", True, "<s>", "</s>", True, {"file": n}))
    jobs.append(job("four " + n, t, "four", True, "<s>", "</s>", False, {"file": n}))
    jobs.append(job("nogen " + n, t, "short", False, "<s>", "</s>", False, {"file": n}))
for k, s in enumerate(SNIPPETS):
    jobs.append(job(f"snippet {k}", s, "four", True, "<s>", "</s>", False, {"template": s}))
for e in EXPRESSIONS:
    t = "{{ " + e + " }}"
    jobs.append(job("expression " + e, t, "four", True, "<s>", "</s>", False, {"template": t}))

doc = {"_source": "written by scripts/chat-template-oracle.py with Jinja2 3.1.6 in transformers' chat-template environment (see the script)",
       "conversations": CONVERSATIONS, "tools": TOOLS, "jobs": jobs}
with open(f"{RES}/jinja2-renders.json", "w", encoding="utf-8") as out:
    json.dump(doc, out, ensure_ascii=False, indent=1)
    out.write("\n")
print(len(jobs), "jobs,", sum("error" in j for j in jobs), "errors")
