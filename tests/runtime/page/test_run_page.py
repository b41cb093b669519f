"""A run's page (``RunResult.to_html()``, ``langtree show``): one HTML file that shows the
tree of tasks and nodes, every step instance with its calls, every value with what wrote
it, the failures, and the plan drawn without a script.

The test marked ``browser`` opens the page from its file in headless Chromium (the
``browser`` fixture of tests/conftest.py, as tests/test_site.py opens the docs site);
with ``LANGTREE_SCREENSHOTS=DIR`` it also saves screenshots there.
"""

import json
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from html_elements import Element, parse
from pydantic import Field

from langtree import LLMProvider, RunStructure, TreeNode
from langtree.errors import LangTreeError
from langtree.runtime import RunResult
from langtree.runtime.page._files import read_run
from langtree.runtime.page._render import page_html
from langtree.runtime.page._saved import SavedCall, SavedWrite, saved_run
from langtree.testing import FakeChatModel
from langtree.testing._fake_model import FakeRequest, ResponderResult

if TYPE_CHECKING:
    from playwright.sync_api import Browser


class Document(TreeNode):
    """One document."""

    text: str = Field(description="The document's text.")
    summary: str = Field(description="A summary of the document.")


class TaskResearch(TreeNode):
    """You answer a question from a set of documents."""

    question: str = Field(description="The question to answer.")
    documents: list[Document] = Field(
        default=[],
        description="! @each[documents]->task.answer@{{value.findings=documents.summary}}*",
    )


class TaskAnswer(TreeNode):
    """Answer the question from the findings."""

    findings: list[str] = Field(default=[], description="One finding per document.")
    answer: str = Field(description="The answer.")


DOCUMENTS = [{"text": "Doc A"}, {"text": "Doc B"}, {"text": "Doc C"}]
SECOND = "task.research.documents[1]"
Responder = Callable[[FakeRequest], ResponderResult]


def answered(request: FakeRequest) -> ResponderResult:
    return {name: f"{name} of {request.node_path}" for name in request.fields}


def second_never_summarised(request: FakeRequest) -> ResponderResult:
    return {"summary": None} if request.node_path == SECOND else answered(request)


def second_summarised_on_the_retry() -> Responder:
    asked: list[str] = []

    def respond(request: FakeRequest) -> ResponderResult:
        asked.append(request.node_path)
        if request.node_path == SECOND and asked.count(SECOND) == 1:
            return {"summary": None}
        return answered(request)

    return respond


def research(
    responder: Responder = answered,
    *,
    question: str = "Is it stable?",
    documents: list[dict[str, object]] = DOCUMENTS,
    config: dict[str, object] | None = None,
    max_retries: int = 0,
    journal: Path | None = None,
    report_usage: bool = False,
) -> RunResult:
    model = FakeChatModel(responder=responder, report_usage=report_usage)
    structure = RunStructure(config, provider=LLMProvider({"default": model}))
    structure.add(TaskResearch)
    structure.add(TaskAnswer)
    inputs = {TaskResearch: {"question": question, "documents": documents}}
    return structure.run(inputs, max_retries=max_retries, journal=journal)


def page(result: RunResult) -> Element:
    return parse(result.to_html())


DATA = ("data-step", "data-node", "data-sample")


def instances(document: Element) -> Counter[tuple[str, str, str]]:
    """Each step instance on the page (step, node, sample), counted once per call."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for instance in document.all("details", "instance"):
        step, node, sample = (instance.attrs[name] or "" for name in DATA)
        counts[step, node, sample] += len(instance.all(cls="call"))
    return counts


# --- every step instance, with its calls ------------------------------------------------


def test_every_step_instance_is_on_the_page_with_each_of_its_calls() -> None:
    result = research()

    shown = instances(page(result))

    assert shown == Counter((r.step_id, r.node_path, str(r.sample)) for r in result.trace)
    assert len(shown) == 4


def test_a_call_shows_its_prompt_answer_model_latency_and_tokens() -> None:
    result = research(report_usage=True)
    (record,) = [record for record in result.trace if record.node_path == "task.answer"]
    assert record.usage is not None

    instance = page(result).one("details", "instance", data_node="task.answer")
    call = instance.one(cls="call")

    assert instance.one("summary").text() == (
        f"ok task.answer:answer: 1 call, {record.latency:.3f} s, model default"
    )
    assert call.one("p", "facts").text() == (
        f"Attempt 1: model default (answered by langtree-fake), {record.latency:.3f} s, "
        f"{record.usage['total_tokens']:,} tokens ({record.usage['input_tokens']:,} in, "
        f"{record.usage['output_tokens']:,} out), finish reason stop"
    )
    messages = [(pre.attrs["data-role"], pre.text()) for pre in call.all("pre", "message")]
    assert messages == [(message.type, message.text) for message in record.messages]
    assert call.one("pre", "answer").text() == record.raw_output


def test_a_call_without_reported_usage_shows_its_prompt_s_token_count() -> None:
    result = research()
    (record,) = [record for record in result.trace if record.node_path == "task.answer"]

    call = page(result).one("details", "instance", data_node="task.answer").one(cls="call")

    assert call.one("p", "facts").text() == (
        f"Attempt 1: model default (answered by langtree-fake), {record.latency:.3f} s, "
        f"{record.token_count:,} prompt tokens (counted; the provider reported none), "
        "finish reason stop"
    )


def test_a_retried_instance_shows_each_call_and_why_the_first_was_not_accepted() -> None:
    result = research(second_summarised_on_the_retry(), max_retries=1)
    first, retry = [record for record in result.trace if record.node_path == SECOND]

    instance = page(result).one("details", "instance", data_node=SECOND)
    calls = instance.all(cls="call")

    assert instance.classes == ["instance", "retried"]
    assert [call.classes for call in calls] == [["call", "failed"], ["call"]]
    assert [call.one("pre", "answer").text() for call in calls] == [
        first.raw_output,
        retry.raw_output,
    ]
    assert calls[0].all("p", "label")[-1].text() == "Not accepted (invalid_output)"
    assert calls[0].one("pre", "error").text() == first.error
    assert calls[1].all("pre", "error") == []


def test_a_refused_call_shows_the_wait_before_its_retry() -> None:
    data = json.loads(research(second_summarised_on_the_retry(), max_retries=1).to_json())
    first = next(call for call in data["trace"] if call["node_path"] == SECOND)
    note = (
        "waiting 300 s for the provider before the retry: it asked for 100000 s "
        "(Retry-After), more than RetryPolicy.max_wait"
    )
    first |= {"note": note, "finish_reason": None}

    instance = parse(page_html(saved_run(data, "run.json"))).one("details", data_node=SECOND)
    refused, retry = instance.all(cls="call")

    assert refused.one("p", "note").text() == note
    assert not refused.one("p", "facts").text().endswith("finish reason stop")
    assert retry.all("p", "note") == []


def second_refused_by_the_provider(request: FakeRequest) -> ResponderResult:
    if request.node_path == SECOND:
        raise PermissionError("no access to this model")
    return answered(request)


def test_a_call_that_got_no_answer_counts_no_tokens_on_the_page() -> None:
    result = research(second_refused_by_the_provider, config={"on_error": "continue"})
    refused = [record for record in result.trace if record.node_path == SECOND]
    assert [record.answered for record in refused] == [False]

    document = page(result)
    summary = document.one("p", "summary").text()
    facts = document.one("details", data_node=SECOND).one("p", "facts").text()

    assert facts.endswith(", no tokens (the call got no answer)")
    assert summary == result._repr_markdown_().split("\n")[0].removeprefix("**Run**: ")
    counted = sum(record.token_count for record in result.trace if record.answered)
    assert f", {counted:,} tokens (counted from the prompts" in summary


@pytest.mark.parametrize("report_usage", [False, True], ids=["counted", "reported"])
def test_the_page_opens_with_the_line_the_notebook_shows(report_usage: bool) -> None:
    result = research(second_summarised_on_the_retry(), max_retries=1, report_usage=report_usage)

    summary = page(result).one("p", "summary").text()

    assert summary == result._repr_markdown_().split("\n")[0].removeprefix("**Run**: ")
    assert summary.startswith("5 calls, 1 retry, 1 failed, ")


def test_a_call_whose_provider_reports_no_total_counts_its_input_and_output_tokens() -> None:
    # The run's summaries (run_tokens()) add input and output where the provider gives
    # no total; the page reads the same rule, not the prompt's count.
    data = json.loads(research().to_json())
    for call in data["trace"]:
        call["usage"] = {"input_tokens": 7, "output_tokens": 3}

    document = parse(page_html(saved_run(data, "run.json")))
    facts = document.one("details", data_node="task.answer").one("p", "facts").text()

    assert document.one("p", "summary").text() == "4 calls, 40 tokens"
    assert ", 10 tokens (7 in, 3 out), " in facts


def test_the_page_reads_every_key_a_saved_result_writes() -> None:
    # The page's models read what TraceRecord.to_dict() and ProvenanceRecord.to_dict()
    # write, more loosely typed (a later version's kinds are shown, not refused); keys
    # they do not declare are dropped unseen, so each written key must be declared.
    data = json.loads(research(config={"on_error": "continue"}).to_json())

    written = {key for call in data["trace"] for key in call}
    writes = {key for write in data["provenance"] for key in write}

    assert written - set(SavedCall.model_fields) == set()
    assert writes - set(SavedWrite.model_fields) == set()


# --- escaping and no network ------------------------------------------------------------


def test_text_from_the_caller_and_the_model_stays_text() -> None:
    hostile = '</pre><script>alert("q")</script> & <b>bold</b>'

    def markup(request: FakeRequest) -> ResponderResult:
        return {name: f"<img src=x onerror=alert(1)> {name}" for name in request.fields}

    result = research(markup, question=hostile)
    document = page(result)

    assert {element.tag for element in document.all()} & {"script", "img", "b"} == set()
    question = document.one(cls="value", data_path="task.research.question")
    assert question.one("pre").text() == hostile
    answers = sorted(pre.text() for pre in document.all("pre", "answer"))
    assert answers == sorted(record.raw_output for record in result.trace)
    prompts = sorted(pre.text() for pre in document.all("pre", "message"))
    assert prompts == sorted(m.text for record in result.trace for m in record.messages)
    assert any("<img src=x onerror=alert(1)> summary" in text for text in prompts)


HOSTILE = "\"'><script>alert(1)</script><img src=x onerror=alert(2)>&amp;"
"""Text that would be markup, in an element's text or in a quoted attribute, unescaped."""

KEYED_BY_TAG = ("tasks", "partial", "invalid")


def hostile(data: object) -> object:
    """JSON data with ``HOSTILE`` after every string value (keys are left as they are)."""
    if isinstance(data, str):
        return data + HOSTILE
    if isinstance(data, list):
        return [hostile(item) for item in data]
    if isinstance(data, dict):
        return {key: hostile(value) for key, value in data.items()}
    return data


def test_every_text_of_a_saved_result_stays_text_whoever_wrote_the_file() -> None:
    data = json.loads(research(second_never_summarised, config={"on_error": "continue"}).to_json())
    crafted = hostile(data)
    assert isinstance(crafted, dict)
    for name in KEYED_BY_TAG:
        crafted[name] = {tag + HOSTILE: value for tag, value in crafted[name].items()}

    document = parse(page_html(saved_run(crafted, "run.json")))
    elements = document.all()

    assert {element.tag for element in elements} & {"script", "img"} == set()
    assert [name for element in elements for name in element.attrs if name.startswith("on")] == []
    texts = "\n".join(element.text() for element in elements if element.tag != "style")
    shown = {
        "task tags": list(crafted["tasks"]),
        "step ids": [call["step_id"] for call in crafted["trace"]],
        "node paths": [call["node_path"] for call in crafted["trace"]],
        "models": [call["model"] for call in crafted["trace"]],
        "prompts": [m["content"] for call in crafted["trace"] for m in call["messages"]],
        "answers": [call["raw_output"] for call in crafted["trace"]],
        "errors": [error["message"] for error in crafted["errors"]],
        "why a task does not validate": list(crafted["invalid"].values()),
        "plan": [step["element_path"] for step in crafted["plan"]["steps"]],
    }
    assert {what: [t for t in found if t not in texts] for what, found in shown.items()} == {
        what: [] for what in shown
    }
    attributes = [value for element in elements for value in element.attrs.values()]
    assert {call["step_id"] for call in crafted["trace"]} <= set(attributes)


def test_the_page_runs_no_script_and_fetches_nothing() -> None:
    document = page(research())
    elements = document.all()

    fetching = {"script", "link", "img", "iframe", "object", "embed", "audio", "video", "source"}
    assert {element.tag for element in elements} & fetching == set()
    assert [element.attrs for element in elements if "src" in element.attrs] == []
    links = [element.attrs["href"] or "" for element in elements if "href" in element.attrs]
    assert [link for link in links if not link.startswith("#")] == []
    assert [name for element in elements for name in element.attrs if name.startswith("on")] == []
    style = document.one("style").text()
    assert "url(" not in style
    assert "@import" not in style


# --- failures ---------------------------------------------------------------------------


def test_failures_are_listed_first_and_marked_where_they_happened() -> None:
    result = research(second_never_summarised, config={"on_error": "continue"})
    document = page(result)

    failures = document.one("nav", "failures")
    assert failures.one("h2").text() == "4 failures"
    assert [link.text() for link in failures.all("a")] == [
        "task.research does not validate",
        f"task.research.documents:summary at {SECOND} failed",
        "task.answer does not validate",
        f"task.answer:answer at task.answer skipped, because of task.research.documents:summary "
        f"at {SECOND}",
    ]
    ids = {element.attrs.get("id") for element in document.all()}
    assert {(link.attrs["href"] or "")[1:] for link in failures.all("a")} <= ids

    failed = document.one("details", "instance", data_node=SECOND)
    assert (failed.classes, "open" in failed.attrs) == (["instance", "failed"], True)
    nodes = {node.attrs["data-path"]: node.classes for node in document.all("section", "node")}
    assert nodes[SECOND] == ["node", "failed"]
    assert nodes["task.research.documents[0]"] == ["node"]
    for tag, why in result.invalid.items():
        task = document.one("section", "task", data_task=tag)
        assert task.classes == ["task", "invalid"]
        assert task.all("pre", "error")[0].text() == why
    (error,) = result.errors
    node = document.one("section", "node", data_path=SECOND)
    assert node.one(cls="failure").one("pre", "error").text() == str(error)
    skipped = document.one("section", "node", data_path="task.answer").one("p", "skipped")
    assert skipped.text() == (
        f"skipped task.answer:answer, because of task.research.documents:summary at {SECOND}"
    )


def test_the_plan_marks_the_steps_that_failed_or_were_skipped() -> None:
    document = page(research(second_never_summarised, config={"on_error": "continue"}))

    boxes = {box.attrs["data-step"]: box.classes for box in document.all("g", "step")}
    rows = {row.attrs["data-step"]: row.attrs.get("class") for row in document.all("tr")[1:]}

    assert boxes == {
        "task.research.documents:summary": ["step", "failed"],
        "task.answer:answer": ["step", "failed"],
    }
    assert rows == {"task.research.documents:summary": "failed", "task.answer:answer": "failed"}


# --- values and what wrote them ---------------------------------------------------------


def test_each_value_shows_what_wrote_it_and_the_writes_it_replaced() -> None:
    result = research()
    document = page(result)

    def value(path: str) -> Element:
        return document.one("div", "value", data_path=path)

    mapped, default = result.provenance("task.answer.findings")
    findings = value("task.answer.findings")
    assert findings.one("span", "wrote").text() == (
        "written by the mapping of documents.summary by ! @each[documents]->task.answer@"
        "{{value.findings=documents.summary}}* in TaskResearch.documents at "
        f"{mapped.at.isoformat()}"
    )
    assert json.loads(findings.all("pre")[0].text()) == mapped.value
    history = findings.one("details", "history")
    assert history.one("summary").text() == "1 earlier write"
    assert history.one("p", "wrote").text() == (
        f"by the field's default at {default.at.isoformat()}"
    )
    assert json.loads(history.one("pre").text()) == []

    (summary,) = result.provenance("task.research.documents[0].summary")
    assert value("task.research.documents[0].summary").one("span", "wrote").text() == (
        "written by step task.research.documents:summary, model default, attempt 1 at "
        f"{summary.at.isoformat()}"
    )
    (question,) = result.provenance("task.research.question")
    assert value("task.research.question").one("span", "wrote").text() == (
        f"written by the caller's input at {question.at.isoformat()}"
    )


def test_each_task_lists_its_nodes_in_tree_order_with_their_depths() -> None:
    document = page(research())

    tasks = {
        task.attrs["data-task"]: [
            (node.attrs["data-path"], node.attrs["data-depth"]) for node in task.all("section")
        ]
        for task in document.all("section", "task")
    }

    assert tasks == {
        "task.research": [
            ("task.research", "0"),
            *((f"task.research.documents[{i}]", "1") for i in range(3)),
        ],
        "task.answer": [("task.answer", "0")],
    }


def test_a_tree_hundreds_of_levels_deep_has_its_page() -> None:
    deepest = "task.deep" + ".child" * 300
    write = {"kind": "input", "path": f"{deepest}.text", "value": "leaf", "at": "now"}

    document = parse(page_html(saved_run({"tasks": {}, "trace": [], "provenance": [write]}, "")))

    nodes = document.all("section", "node")
    assert [node.attrs["data-depth"] for node in nodes] == [str(depth) for depth in range(301)]
    assert nodes[-1].one("div", "value").one("pre").text() == "leaf"


# --- the plan ---------------------------------------------------------------------------


def test_the_plan_is_drawn_as_an_svg_with_a_box_per_step_and_an_arrow_per_dependency() -> None:
    result = research()
    assert result.plan is not None
    document = page(result)

    boxes = document.one("svg", "plan").all("g", "step")
    arrows = document.one("svg", "plan").all("line", "edge")

    assert [box.attrs["data-step"] for box in boxes] == [step.id for step in result.plan.steps]
    assert [[text.text() for text in box.all("text")] for box in boxes] == [
        ["1. task.research.documents[*]", "summary", "default model"],
        ["2. task.answer", "answer", "default model"],
    ]
    assert [(a.attrs["data-from"], a.attrs["data-to"]) for a in arrows] == [
        (dep, step.id) for step in result.plan.steps for dep in step.depends_on
    ]
    assert [[cell.text() for cell in row.all("td")] for row in document.all("tr")[1:]] == [
        ["1", "task.research.documents[*]", "summary", "default model", "—"],
        ["2", "task.answer", "answer", "default model", "1"],
    ]


def test_a_result_saved_without_its_plan_says_so() -> None:
    data = json.loads(research().to_json())
    del data["plan"]

    document = parse(page_html(saved_run(data, "run.json")))

    assert [note.text() for note in document.all("p", "notice")] == [
        "This result holds no plan (it was saved by an earlier LangTree, or not made by a "
        "run): no plan is shown."
    ]
    assert document.all("svg") == []


# --- saved results and files ------------------------------------------------------------


def test_a_saved_result_gives_the_page_of_the_result(tmp_path: Path) -> None:
    result = research(second_never_summarised, config={"on_error": "continue"})
    saved = tmp_path / "run.json"
    saved.write_text(result.to_json(), encoding="utf-8")

    assert page_html(read_run(saved)) == result.to_html()


def test_write_html_writes_the_page_as_utf8(tmp_path: Path) -> None:
    result = research(question="Ist es stabil? — ja")

    result.write_html(tmp_path / "run.html")

    assert (tmp_path / "run.html").read_text(encoding="utf-8") == result.to_html()
    assert '<meta charset="utf-8">' in result.to_html()


def test_write_html_into_a_missing_folder_says_so(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "run.html"

    with pytest.raises(LangTreeError) as raised:
        research().write_html(target)

    assert str(raised.value) == (
        f"The page cannot be written to {str(target)!r}: No such file or directory\n"
        "  hint: give a path in a folder that exists and that you may write to"
    )


def test_data_that_is_not_a_saved_result_is_refused_with_each_problem() -> None:
    data = {"tasks": {}, "trace": [{"step_id": "a:b", "latency": "slow"}]}

    with pytest.raises(LangTreeError) as raised:
        saved_run(data, "run.json")

    assert str(raised.value) == (
        "'run.json' is not a saved LangTree result:\n"
        "  - trace.0.node_path: Field required\n"
        "  - trace.0.fields: Field required\n"
        "  - trace.0.model: Field required\n"
        "  - trace.0.attempt: Field required\n"
        "  - trace.0.latency: Input should be a valid number, unable to parse string as a "
        "number\n"
        "  - trace.0.raw_output: Field required\n"
        "  hint: give the JSON that RunResult.to_json() wrote, or a journal file"
    )


# --- a journal --------------------------------------------------------------------------


JOURNAL_NOTE = (
    "This page shows a journal: the answers its model calls received, one block per call. "
    "A journal keeps no prompts, no plan and no values but the answers (so no provenance "
    "either): the page of a saved result has them all (RunResult.to_html(), or langtree "
    "show on the JSON that RunResult.to_json() wrote)."
)


def test_a_journal_shows_each_call_with_its_answers_and_says_what_it_lacks(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "run.sqlite"
    result = research(second_summarised_on_the_retry(), max_retries=1, journal=journal)

    document = parse(page_html(read_run(journal)))

    assert [note.text() for note in document.all("p", "notice")] == [JOURNAL_NOTE]
    assert document.one("p", "summary").text() == "5 answers to 4 calls, 1 invalid"
    assert instances(document) == Counter(
        {(r.step_id, r.node_path, str(r.sample)): 1 for r in result.trace}
        | {("task.research.documents:summary", SECOND, "1"): 2}
    )
    retried = document.one("details", "instance", data_node=SECOND)
    assert retried.classes == ["instance", "retried"]
    assert re.fullmatch(
        r"retried task\.research\.documents:summary, call [0-9a-f]{12}: 2 answers, "
        r"\d+\.\d{3} s, model default",
        retried.one("summary").text(),
    )
    assert [pre.text() for pre in retried.all("pre", "answer")] == [
        record.raw_output for record in result.trace if record.node_path == SECOND
    ]
    assert document.all("svg") == []
    assert document.all("pre", "message") == []


def test_reading_a_journal_changes_nothing_in_its_folder(tmp_path: Path) -> None:
    journal = tmp_path / "run.sqlite"
    research(journal=journal)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    read_run(journal)

    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


# --- in a browser -----------------------------------------------------------------------


WIDTHS = {"desktop": 1280, "phone": 390}

LONG_TEXT = " ".join(f"word{number}" for number in range(400))
"""One line of about 3,500 characters: the prompts that show it are wider than any screen."""

PROMPT_BOX_JS = """
(pre) => {
  const before = pre.scrollLeft;
  pre.scrollLeft = pre.scrollWidth;
  return {
    wider: pre.scrollWidth > pre.clientWidth,
    overflow: getComputedStyle(pre).overflowX,
    scrolled: pre.scrollLeft > before,
    pageFits: document.documentElement.scrollWidth <= document.documentElement.clientWidth,
  };
}
"""


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_in_a_browser_the_page_opens_from_its_file_and_a_long_prompt_scrolls(
    browser: "Browser", tmp_path: Path, width: int
) -> None:
    result = research(documents=[{"text": LONG_TEXT}, {"text": "Doc B"}])
    path = tmp_path / "run.html"
    result.write_html(path)

    page = browser.new_page(viewport={"width": width, "height": 900})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    try:
        page.goto(path.as_uri(), wait_until="load")
        summaries = page.locator("details.instance > summary")
        visible = [summaries.nth(i).is_visible() for i in range(summaries.count())]
        steps = sorted(summaries.nth(i).locator("code").first.inner_text() for i in range(3))
        plan_shown = page.locator("svg.plan").is_visible()
        instance = page.locator('details.instance[data-node="task.research.documents[0]"]')
        instance.locator("summary").click()
        prompt = instance.locator('pre.message[data-role="human"]')
        prompt_shown = prompt.is_visible()
        box = prompt.evaluate(PROMPT_BOX_JS)
        screenshots = os.environ.get("LANGTREE_SCREENSHOTS")
        if screenshots:
            Path(screenshots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{screenshots}/run-page-{width}.png", full_page=True)
    finally:
        page.close()

    assert requested == [path.as_uri()]
    assert visible == [True] * 3
    assert steps == sorted(record.step_id for record in result.trace)
    assert plan_shown
    assert prompt_shown
    assert box == {"wider": True, "overflow": "auto", "scrolled": True, "pageFits": True}
