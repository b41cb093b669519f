"""The page's Jinja2 template: one HTML file, its style inline, no script, nothing fetched.

Every text a run holds (prompts, answers, values, errors, paths, model names) reaches
the page through Jinja2's autoescaping, so none of it can become markup. Texts that may
be long (prompts, answers, values) stand in ``<pre>`` blocks that scroll instead of
being cut (a newline follows each ``<pre>`` tag: browsers drop the first newline of a
``<pre>``, which would otherwise be the text's own); each step instance is a
``<details>`` block, closed unless it failed.
"""

from __future__ import annotations

__all__ = ["PAGE_TEMPLATE"]

_STYLE = """
:root {
  color-scheme: light;
  --line: #d0d5dd; --muted: #475467; --code-bg: #f6f8fa;
  --red: #b42318; --red-bg: #fef3f2; --amber: #b54708; --amber-bg: #fffaeb;
  --green: #067647; --green-bg: #ecfdf3;
}
* { box-sizing: border-box; }
body {
  margin: 0; color: #101828; background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
header, main { max-width: 75rem; margin: 0 auto; padding: 0 1rem; }
main { padding-bottom: 3rem; }
h1 { font-size: 1.5rem; margin: 1rem 0 .25rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.75rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: .5rem 0; overflow-wrap: anywhere; }
h4 { font-size: .95rem; margin: .25rem 0; overflow-wrap: anywhere; }
code, pre, svg text { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
code { font-size: .9em; overflow-wrap: anywhere; }
pre {
  margin: .25rem 0 .75rem; padding: .5rem .75rem; font-size: 12.5px; line-height: 1.45;
  background: var(--code-bg); border: 1px solid var(--line); border-radius: 4px;
  white-space: pre; overflow: auto; max-height: 32rem;
}
.summary, .facts, .label, .wrote, .note { color: var(--muted); }
.label { margin: .5rem 0 0; font-size: .85rem; font-weight: 600; }
.facts { margin: .25rem 0; font-size: .9rem; }
.notice { background: var(--amber-bg); border: 1px solid #fedf89; padding: .5rem .75rem;
  border-radius: 4px; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .8rem;
  font-weight: 600; background: var(--green-bg); color: var(--green); }
.badge.failed, .badge.skipped { background: var(--red-bg); color: var(--red); }
.badge.retried { background: var(--amber-bg); color: var(--amber); }
nav.failures { border: 2px solid var(--red); background: var(--red-bg); border-radius: 6px;
  padding: .25rem 1rem; margin-top: 1rem; }
nav.failures h2 { color: var(--red); margin-top: .5rem; }
nav.failures a { color: var(--red); overflow-wrap: anywhere; }
.diagram { overflow: auto; border: 1px solid var(--line); border-radius: 4px; }
svg.plan { display: block; }
svg.plan rect { fill: #fff; stroke: #667085; }
svg.plan .failed rect { fill: var(--red-bg); stroke: var(--red); stroke-width: 2; }
svg.plan text { font-size: 12px; fill: #101828; }
svg.plan .edge { stroke: #98a2b3; stroke-width: 1.2; }
svg.plan marker path { fill: #98a2b3; }
.table { overflow-x: auto; }
table { border-collapse: collapse; margin: .75rem 0; font-size: .9rem; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
tr.failed td { background: var(--red-bg); }
.task { border: 1px solid var(--line); border-radius: 6px; padding: .25rem .75rem;
  margin: 1rem 0; }
.task.invalid { border: 2px solid var(--red); }
/* Nodes are laid out flat, indented by depth up to a point: deep trees stay readable. */
.node { border-left: 2px solid var(--line); padding-left: .6rem; margin: .75rem 0;
  margin-left: calc(min(var(--depth), 8) * 1rem); }
.node.failed { border-left-color: var(--red); }
.node.failed > h4 { color: var(--red); }
.value { margin: .25rem 0 .5rem; }
.wrote { font-size: .85rem; }
details { margin: .4rem 0; }
details > summary { cursor: pointer; overflow-wrap: anywhere; }
.instance, .transform { border: 1px solid var(--line); border-radius: 4px; padding: .25rem .6rem; }
.instance.failed { border: 2px solid var(--red); background: var(--red-bg); }
.instance.retried { border-color: #fedf89; }
.call { border-left: 3px solid var(--line); padding-left: .6rem; margin: .5rem 0; }
.call.failed { border-left-color: var(--red); }
pre.error { border-color: var(--red); background: var(--red-bg); color: #7a271a; }
.failure { border: 2px solid var(--red); background: var(--red-bg); border-radius: 4px;
  padding: .25rem .6rem; margin: .5rem 0; }
"""

PAGE_TEMPLATE = (
    """\
{%- macro wrote(write) -%}
{%- if write.kind == "input" -%}the caller's input
{%- elif write.kind == "default" -%}the field's default
{%- elif write.kind == "step" -%}step <code>{{ write.step_id }}</code>, model <code>{{
  write.model }}</code>, attempt {{ write.attempt }}
{%- if write.sample and write.sample > 1 %}, {{ write.sample }} samples{% endif %}
{%- if write.replayed %}, replayed{% endif %}
{%- elif write.kind == "mapping" -%}the mapping of <code>{{ write.source }}</code> by <code>{{
  write.command }}</code> in <code>{{ write.location }}</code>
{%- elif write.kind == "literal" -%}the literal <code>{{ write.source }}</code> of <code>{{
  write.command }}</code> in <code>{{ write.location }}</code>
{%- elif write.kind == "transform" -%}the transform <code>{{ write.expression }}</code>
{%- else -%}<code>{{ write.kind }}</code>
{%- endif %} at {{ write.at }}
{%- endmacro -%}

{%- macro instance_block(instance) -%}
<details class="instance {{ instance.status }}" id="{{ instance.anchor }}" \
data-step="{{ instance.step_id }}" data-node="{{ instance.node_path }}" \
data-sample="{{ instance.sample }}"{% if instance.status == "failed" %} open{% endif %}>
<summary><span class="badge {{ instance.status }}">{{ instance.status }}</span> \
<code>{{ instance.step_id }}</code>
{%- if instance.sample > 1 %}, sample {{ instance.sample }}{% endif %}
{%- if instance.call %}, call <code>{{ instance.call[:12] }}</code>{% endif %}: \
{{ instance.calls | length | counted("answer" if instance.call else "call") }}, \
{{ instance.latency | seconds }}, model <code>{{ instance.calls[-1].model }}</code></summary>
{% for call in instance.calls %}
<div class="call{% if call.error is not none %} failed{% endif %}">
<p class="facts">Attempt {{ call.attempt }}: model <code>{{ call.model }}</code>
{%- if call.answered_by %} (answered by <code>{{ call.answered_by }}</code>){% endif %}, \
{{ call.latency | seconds }}
{%- if call.waited %} after waiting {{ call.waited | seconds }}{% endif %}, {{ call | tokens }}
{%- if call.replayed %}, replayed from the journal or the cache{% endif %}
{%- if call.truncated %}, cut off at the output limit{% endif %}
{%- if call.finish_reason %}, finish reason {{ call.finish_reason }}{% endif %}</p>
{% for message in call.messages %}
<p class="label">Prompt: {{ message.role }} message</p>
<pre class="message" data-role="{{ message.role }}">
{{ message.content }}</pre>
{% endfor %}
<p class="label">Answer</p>
<pre class="answer">
{{ call.raw_output or "(none: the call raised)" }}</pre>
{% if call.error is not none %}
<p class="label">Not accepted{% if call.failure %} ({{ call.failure }}){% endif %}</p>
<pre class="error">
{{ call.error }}</pre>
{% endif %}
{% if call.note %}
<p class="note">{{ call.note }}</p>
{% endif %}
</div>
{% endfor %}
</details>
{%- endmacro -%}

{%- macro node(view) -%}
<section class="node{% if view.failed %} failed{% endif %}" id="{{ view.anchor }}" \
data-path="{{ view.path }}" data-depth="{{ view.depth }}" style="--depth: {{ view.depth }}">
<h4>{{ view.path }}</h4>
{% for value in view.values %}
<div class="value" data-path="{{ value.path }}">
<code>{{ value.field }}</code> <span class="wrote">written by {{ wrote(value.writes[0]) }}</span>
<pre>
{{ value.writes[0].value | text }}</pre>
{% if value.writes | length > 1 %}
<details class="history"><summary>{{ (value.writes | length - 1) | counted("earlier write") }}\
</summary>
{% for write in value.writes[1:] %}
<p class="wrote">by {{ wrote(write) }}</p>
<pre>
{{ write.value | text }}</pre>
{% endfor %}
</details>
{% endif %}
</div>
{% endfor %}
{% for error in view.errors %}
<div class="failure"><p><span class="badge failed">failed</span> \
<code>{{ error.step_id }}</code></p>
<pre class="error">
{{ error.message }}</pre></div>
{% endfor %}
{% for skip in view.skipped %}
<p class="failure skipped"><span class="badge skipped">skipped</span> \
<code>{{ skip.step_id }}</code>, because of <code>{{ skip.because }}</code></p>
{% endfor %}
{% for instance in view.instances %}{{ instance_block(instance) }}
{% endfor %}
{% for transform in view.transforms %}
<details class="transform" data-step="{{ transform.step_id }}">
<summary><span class="badge">transform</span> <code>{{ transform.step_id }}</code>: \
<code>{{ transform.expression }}</code>, {{ transform.latency | seconds }}</summary>
<pre>
{{ transform.value | text }}</pre>
</details>
{% endfor %}
</section>
{%- endmacro -%}

<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LangTree run: {{ title }}</title>
<style>"""
    + _STYLE
    + """</style>
</head>
<body>
<header>
<h1>LangTree run: {{ title }}</h1>
<p class="summary">{{ summary }}</p>
{% for note in notes %}
<p class="notice">{{ note }}</p>
{% endfor %}
</header>
<main>
{% if tree.failures %}
<nav class="failures" aria-label="Failures">
<h2>{{ tree.failures | length | counted("failure") }}</h2>
<ul>
{% for failure in tree.failures %}
<li><a href="#{{ failure.anchor }}">{{ failure.text }}</a></li>
{% endfor %}
</ul>
</nav>
{% endif %}
{% if plan is not none %}
<section id="plan">
<h2>Plan: {{ plan.steps | length | counted("step") }}</h2>
{% if diagram.boxes %}
<div class="diagram">
<svg class="plan" width="{{ diagram.width | round(1) }}" height="{{ diagram.height | round(1) }}" \
viewBox="0 0 {{ diagram.width | round(1) }} {{ diagram.height | round(1) }}" role="img" \
aria-label="The plan's steps, each below the steps it waits for">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" \
markerHeight="7" orient="auto"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>
{% for edge in diagram.edges %}
<line class="edge" data-from="{{ edge.start }}" data-to="{{ edge.end }}" \
x1="{{ edge.x1 | round(1) }}" y1="{{ edge.y1 | round(1) }}" x2="{{ edge.x2 | round(1) }}" \
y2="{{ edge.y2 | round(1) }}" marker-end="url(#arrow)"/>
{% endfor %}
{% for box in diagram.boxes %}
<g class="step{% if box.failed %} failed{% endif %}" data-step="{{ box.step_id }}">\
<title>{{ box.step_id }}</title>\
<rect x="{{ box.x | round(1) }}" y="{{ box.y | round(1) }}" width="{{ box.width | round(1) }}" \
height="{{ box.height | round(1) }}" rx="6"/>
{% for line in box.lines %}
<text x="{{ (box.x + 10) | round(1) }}" \
y="{{ (box.y + 4 + loop.index * line_height) | round(1) }}">{{ line }}</text>
{% endfor %}
</g>
{% endfor %}
</svg>
</div>
<div class="table">
<table class="steps">
<thead><tr><th>#</th><th>node</th><th>fields</th><th>made by</th><th>waits for</th></tr></thead>
<tbody>
{% for step in plan.steps %}
<tr{% if step.id in tree.failed_steps %} class="failed"{% endif %} data-step="{{ step.id }}">\
<td>{{ loop.index }}</td><td><code>{{ step.element_path }}</code></td>\
<td>{{ step.fields | join(", ") }}</td><td>{{ step | made_by }}</td>\
<td>{{ waits_for[step.id] or "—" }}</td></tr>
{% endfor %}
</tbody>
</table>
</div>
{% endif %}
</section>
{% endif %}
<section id="tasks">
<h2>{{ "Tasks" if tasks_known else "Nodes called" }}</h2>
{% for task in tree.tasks %}
<section class="task{% if task.invalid is not none %} invalid{% endif %}" \
id="{{ task.anchor }}" data-task="{{ task.tag }}">
<h3>{{ task.tag }}{% if task.invalid is not none %} \
<span class="badge failed">does not validate</span>{% endif %}</h3>
{% if task.invalid is not none %}<pre class="error">
{{ task.invalid }}</pre>{% endif %}
{% if task.values is not none %}
<details class="values"><summary>The task's values as JSON</summary>
<pre>
{{ task.values | json }}</pre>
</details>
{% endif %}
{% for view in task.nodes %}{{ node(view) }}
{% endfor %}
</section>
{% endfor %}
</section>
</main>
</body>
</html>
"""
)
