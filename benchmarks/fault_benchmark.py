"""Fault-injection benchmark: the run benchmark's report tree on a model that fails a fifth
of its calls.

Each call of a ``FakeChatModel(report_usage=True)`` fails, with probability
``--fault-rate`` drawn from ``random.Random(seed)`` in call order, with one fault from an
even mix: a call that outlasts the run's ``call_timeout``, an HTTP 429 with a Retry-After
header, an HTTP 500/503, an answer cut off at the output limit, and arguments that do not
validate. Otherwise it answers validly, with values derived from the prompt, so a value
that went to the wrong place changes every value built on it. Every run must complete, and
its result must equal a fault-free run's. See benchmarks/README.md, "Fault-injection
benchmark".
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import hashlib
import json
import math
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from run_benchmark import TaskAbstract, TaskReport, document, langtree_structure, machine

from langtree import LangTreeError, RetryPolicy
from langtree.runtime import RunResult, RunUsage, TraceRecord
from langtree.testing import FakeChatModel, FakeRequest, ResponderResult

try:
    import httpx2
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat import ChatCompletionMessageFunctionToolCall as ToolCall
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_message_function_tool_call import Function
    from openai.types.completion_usage import CompletionUsage
except ImportError:  # the benchmark runs without the SDK too, on stand-ins (see below)
    openai = None

FAULTS = ("timeout", "rate limit (429)", "server error (5xx)", "truncated", "invalid")
TRANSIENT = frozenset(FAULTS[:3])
LATENCY = (0.001, 0.010)  # seconds a call that does not time out takes, uniform
RETRY_AFTER = (0.010, 0.050)  # seconds a 429 asks to wait, uniform
FEEDBACK = "Your previous answer could not be used"  # how LangTree's retry message starts

# --- the provider's errors, as the openai SDK builds them -----------------------------------


class StandInStatusError(Exception):
    """An HTTP error when openai is not installed: ``status_code`` and ``response``."""

    def __init__(self, message: str, status: int, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.status_code = status
        self.response = SimpleNamespace(status_code=status, headers=headers)


class LengthFinishReasonError(Exception):
    """Named like openai's (LangTree recognises the name), with a completion's usage."""

    def __init__(self, *, completion: object) -> None:
        super().__init__("Could not parse response content as the length limit was reached")
        self.completion = completion


def status_error(status: int, message: str, headers: dict[str, str]) -> Exception:
    """What the SDK's ``_make_status_error`` raises for an HTTP error response."""
    if openai is None:
        return StandInStatusError(f"Error code: {status} - {message}", status, headers)
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    kind = "requests" if status == 429 else "server_error"
    body = {"error": {"message": message, "type": kind, "code": None}}
    headers = {**headers, "x-request-id": "req_fault_benchmark"}
    response = httpx2.Response(status, headers=headers, json=body, request=request)
    error_class = openai.RateLimitError if status == 429 else openai.InternalServerError
    return error_class(f"Error code: {status} - {message}", response=response, body=body["error"])


def length_error(request: FakeRequest, arguments: str, prompt_tokens: int) -> Exception:
    """What the SDK's ``parse`` raises for ``finish_reason="length"``: the completion with
    the tool call's arguments as far as they got, and the tokens it cost."""
    completion_tokens = -(-len(arguments) // 4)
    counts = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    counts["total_tokens"] = prompt_tokens + completion_tokens
    if openai is None:
        usage = SimpleNamespace(**counts)
        return LengthFinishReasonError(completion=SimpleNamespace(usage=usage))
    call = ToolCall(
        id=f"call_{request.tool_name}",
        type="function",
        function=Function(name=request.tool_name or "", arguments=arguments),
    )
    message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[call])
    completion = ChatCompletion(
        id="chatcmpl-fault-benchmark",
        object="chat.completion",
        created=0,
        model="langtree-fake",
        choices=[Choice(index=0, finish_reason="length", message=message)],
        usage=CompletionUsage(**counts),
    )
    return openai.LengthFinishReasonError(completion=completion)


# --- the fault injector -------------------------------------------------------------------


def valid_answer(request: FakeRequest) -> dict[str, object]:
    """Every requested field as ``"<field> <digest of the prompt>"``; LangTree's feedback
    message on a retry is left out, so a retry gets the first attempt's answer."""
    prompt = "\n\n".join(m.text for m in request.messages if not m.text.startswith(FEEDBACK))
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
    return {name: f"{name} {digest}" for name in request.fields}


class FaultInjector:
    """The ``latency`` and ``responder`` of a ``FakeChatModel`` that fails some calls.

    ``latency`` is called first for each request: it draws the call's fault, and a
    timeout's latency; ``respond`` raises or returns what the fault calls for.

    Args:
        rate: The probability that a call fails.
        seed: The seed of the draws.
        call_timeout: The run's ``call_timeout`` (a timeout sleeps three times as long).
    """

    def __init__(self, rate: float, seed: int, call_timeout: float) -> None:
        self.rate = rate
        self.rng = random.Random(seed)
        self.call_timeout = call_timeout
        self.injected: Counter[str] = Counter()
        self.unfired_timeouts = 0
        self.retry_after = 0.0
        self._planned: dict[int, str | None] = {}

    def latency(self, request: FakeRequest) -> float:
        fault = self.rng.choice(FAULTS) if self.rng.random() < self.rate else None
        self._planned[id(request)] = fault
        if fault is None:
            return self.rng.uniform(*LATENCY)
        self.injected[fault] += 1
        return 3 * self.call_timeout if fault == "timeout" else self.rng.uniform(*LATENCY)

    def respond(self, request: FakeRequest) -> ResponderResult:
        fault = self._planned.pop(id(request))
        answer = valid_answer(request)
        if fault == "timeout":  # LangTree's call_timeout should have cancelled the call
            self.unfired_timeouts += 1
        elif fault == "rate limit (429)":
            raise self._rate_limited()
        elif fault == "server error (5xx)":
            status = self.rng.choice((500, 503))
            raise status_error(status, "The server had an error processing your request.", {})
        elif fault == "truncated":
            text = json.dumps(answer)
            raise length_error(request, text[: len(text) // 2], -(-len(request.text) // 4))
        elif fault == "invalid":
            return self._invalid(answer)
        return answer

    def _rate_limited(self) -> Exception:
        """A 429 whose Retry-After is in milliseconds or in (fractional) seconds."""
        seconds = self.rng.uniform(*RETRY_AFTER)
        self.retry_after += seconds
        header = self.rng.choice(
            ({"retry-after-ms": f"{seconds * 1000:.0f}"}, {"retry-after": f"{seconds:.3f}"})
        )
        return status_error(429, "Rate limit reached for requests", header)

    def _invalid(self, answer: dict[str, object]) -> dict[str, object]:
        """The answer with its last field missing, or its first field a number."""
        names = list(answer)
        if self.rng.random() < 0.5:
            return {name: answer[name] for name in names[:-1]}
        return {**answer, names[0]: 42}


# --- runs ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What every run of a session shares."""

    sections: int
    paragraphs: int
    concurrency: int
    call_timeout: float
    max_retries: int
    retry: RetryPolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    """One run: whether it completed, what it gave and what it cost.

    Attributes:
        tasks: The dumps of both tasks (``None``: the run did not complete).
        problem: Why the run did not complete.
        retries: Failed calls by LangTree's kind; in a completed run each was retried.
        consistent: Whether ``result.usage`` counts the calls, retries and failed calls
            that the trace shows.
        seen: Failed calls by the fault their error names, and LangTree's kind.
        waited_retries: Waits before retries (backoff, Retry-After, pauses).
        waited_first: Waits before first attempts (the model paused by a Retry-After).
        retry_after: The Retry-After seconds the injected 429s asked for, summed.
    """

    tasks: tuple[object, ...] | None
    problem: str | None
    calls: int
    retries: Counter[str]
    consistent: bool
    failed_tokens: int
    total_tokens: int
    wall: float
    cpu: float
    waited_retries: float
    waited_first: float
    retry_after: float
    injected: Counter[str] = field(default_factory=Counter)
    seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    unfired_timeouts: int = 0

    @property
    def stray_timeouts(self) -> int:
        """Calls cut off by call_timeout that were not injected timeouts."""
        return self.seen[("timeout", "transient")] - self.injected["timeout"]


def one_run(settings: Settings, rate: float, seed: int) -> Figures:
    """A fresh model and structure, one ``arun``, and its figures."""
    injector = FaultInjector(rate, seed, settings.call_timeout)
    model = FakeChatModel(responder=injector.respond, latency=injector.latency, report_usage=True)
    structure = langtree_structure(model)
    inputs = {TaskReport: document(settings.sections, settings.paragraphs)}
    problem, result = None, None
    started, cpu = time.perf_counter(), time.process_time()
    try:
        result = asyncio.run(
            structure.arun(
                inputs,
                max_concurrency=settings.concurrency,
                max_retries=settings.max_retries,
                retry=settings.retry,
                call_timeout=settings.call_timeout,
            )
        )
    except LangTreeError as error:
        problem = f"{type(error).__name__}: {error}"
        result = getattr(error, "result", None)
    times = (time.perf_counter() - started, time.process_time() - cpu)
    return figures(result, problem, times, injector)


def figures(
    result: RunResult | None,
    problem: str | None,
    times: tuple[float, float],
    injector: FaultInjector,
) -> Figures:
    trace = result.trace if result is not None else ()
    usage = result.usage if result is not None else RunUsage()
    failed = [record for record in trace if record.failure is not None]
    done = result is not None and problem is None
    return Figures(
        tasks=(result.dump(TaskReport), result.dump(TaskAbstract)) if done else None,
        problem=problem,
        calls=len(trace),
        retries=Counter(record.failure for record in failed),
        consistent=(usage.calls, usage.failed_calls) == (len(trace), len(failed))
        and usage.retries == sum(record.attempt > 1 for record in trace),
        failed_tokens=usage.failed_tokens,
        total_tokens=usage.total_tokens,
        wall=times[0],
        cpu=times[1],
        waited_retries=sum(record.waited for record in trace if record.attempt > 1),
        waited_first=sum(record.waited for record in trace if record.attempt == 1),
        retry_after=injector.retry_after,
        injected=injector.injected,
        seen=Counter((fault_of(record), record.failure or "") for record in failed),
        unfired_timeouts=injector.unfired_timeouts,
    )


def fault_of(record: TraceRecord) -> str:
    """Which injected fault a failed trace record describes (an answer cut off at the
    output limit is marked ``truncated``; the others are named by their error)."""
    if record.truncated:
        return "truncated"
    starts = {
        "TimeoutError": "timeout",
        "RateLimitError": "rate limit (429)",
        "StandInStatusError (HTTP 429)": "rate limit (429)",
        "InternalServerError": "server error (5xx)",
        "StandInStatusError": "server error (5xx)",
    }
    error = record.error or ""
    return next((fault for start, fault in starts.items() if error.startswith(start)), "invalid")


# --- the budgets' arithmetic ----------------------------------------------------------------


def exhaust_probability(rate: float, max_retries: int, transient_retries: int) -> float:
    """The probability that one step instance spends a budget before a valid answer, when
    every call fails with probability ``rate``, 3/5 of failures transient and 2/5 invalid.
    """
    transient = rate * len(TRANSIENT) / len(FAULTS)
    invalid = rate - transient

    @functools.cache
    def fails_from(spent_transient: int, spent_invalid: int) -> float:
        if spent_transient > transient_retries or spent_invalid > max_retries:
            return 1.0
        return transient * fails_from(spent_transient + 1, spent_invalid) + (
            invalid * fails_from(spent_transient, spent_invalid + 1)
        )

    return fails_from(0, 0)


def budget_line(args: argparse.Namespace, instances: int) -> str:
    rate = args.fault_rate
    failing = exhaust_probability(rate, args.max_retries, args.transient_retries)
    transient = rate * len(TRANSIENT) / len(FAULTS)
    return (
        f"Budgets: `max_retries={args.max_retries}` (invalid output), "
        f"`RetryPolicy(max_retries={args.transient_retries})` (transient). With "
        f"{transient:.0%} of calls failing transiently and {rate - transient:.0%} with invalid "
        f"output, one step instance spends a budget with probability {failing:.2g}; over "
        f"{instances:,} instances × {args.runs} runs, {failing * instances * args.runs:.2g} "
        "failed instances are expected."
    )


# --- the report -----------------------------------------------------------------------------


def spread(values: Sequence[float], digits: int = 0) -> str:
    """``mean (max)`` of per-run values."""
    return f"{statistics.fmean(values):,.{digits}f} ({max(values):,.{digits}f})"


def row(label: str, clean: Sequence[float], faulty: Sequence[float], digits: int = 0) -> str:
    base = statistics.fmean(clean)
    ratio = f"{statistics.fmean(faulty) / base:.2f}×" if base else "—"
    return f"| {label} | {spread(clean, digits)} | {spread(faulty, digits)} | {ratio} |"


def summary_table(clean: list[Figures], faulty: list[Figures], expected: object) -> list[str]:
    """Per run, with and without faults: completion, calls, retries, tokens, time."""

    def outcome(runs: list[Figures]) -> str:
        completed = sum(run.tasks is not None for run in runs)
        return f"{completed} / {sum(run.tasks == expected for run in runs)} of {len(runs)}"

    def per_run(name: str) -> tuple[list[float], list[float]]:
        return [getattr(run, name) for run in clean], [getattr(run, name) for run in faulty]

    def retries(kind: str) -> tuple[list[float], list[float]]:
        return [run.retries[kind] for run in clean], [run.retries[kind] for run in faulty]

    wasted = sum(run.failed_tokens for run in faulty) / sum(run.total_tokens for run in faulty)
    return [
        "| per run: mean (max) | fault-free | with faults | with ÷ without |",
        "|---|---:|---:|---:|",
        f"| runs completed / correct | {outcome(clean)} | {outcome(faulty)} | |",
        row("model calls", *per_run("calls")),
        row("— retries after transient failures", *retries("transient"), 1),
        row("— — of which timeouts not injected", *per_run("stray_timeouts"), 1),
        row("— retries after invalid output", *retries("invalid_output"), 1),
        row("total tokens", *per_run("total_tokens")),
        row(
            f"— wasted: failed calls' tokens ({wasted:.1%} with faults)", *per_run("failed_tokens")
        ),
        row("wall time (s)", *per_run("wall"), 3),
        row("CPU time (s)", *per_run("cpu"), 3),
        row("waits before retries, summed (s)", *per_run("waited_retries"), 3),
        row("waits before first attempts, summed (s)", *per_run("waited_first"), 3),
        row("Retry-After asked by the 429s, summed (s)", *per_run("retry_after"), 3),
    ]


def fault_table(faulty: list[Figures]) -> list[str]:
    """Faults injected, and the failed calls the trace shows for each."""
    injected = sum((run.injected for run in faulty), Counter[str]())
    seen = sum((run.seen for run in faulty), Counter[tuple[str, str]]())
    calls = sum(run.calls for run in faulty)
    lines = [
        "| fault | injected | per run | share of calls | failed calls in the trace, by kind |",
        "|---|---:|---:|---:|---|",
    ]
    for fault in FAULTS:
        kinds = ", ".join(
            f"{kind} {n}" for (name, kind), n in sorted(seen.items()) if name == fault
        )
        lines.append(
            f"| {fault} | {injected[fault]} | {injected[fault] / len(faulty):.1f} "
            f"| {injected[fault] / calls:.1%} | {kinds or '—'} |"
        )
    total = sum(injected.values())
    lines.append(
        f"| **all** | {total} | {total / len(faulty):.1f} | {total / calls:.1%} "
        f"| {sum(seen.values())} |"
    )
    return lines


def verdict(clean: list[Figures], faulty: list[Figures], expected: object) -> int:
    """Print what went wrong, if anything; 1 when a run did not complete or was wrong."""
    runs = [("fault-free", n, run) for n, run in enumerate(clean)]
    runs += [("with faults", n, run) for n, run in enumerate(faulty)]
    bad = [(label, n, run) for label, n, run in runs if run.tasks != expected]
    for label, number, run in bad:
        print(f"\nRun {number} {label}: {run.problem or 'completed with a wrong result'}")
    if unfired := sum(run.unfired_timeouts for _, _, run in runs):
        print(f"\n{unfired} injected timeout(s) were not cut off by call_timeout.")
    if not all(run.consistent for _, _, run in runs):
        print("\nresult.usage disagrees with the trace in some runs.")
    met = "met" if not bad else "NOT met"
    print(f"\nEvery run completed with the fault-free result: {met}.")
    return 1 if bad else 0


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=12)
    parser.add_argument("--paragraphs", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20, help="runs with faults")
    parser.add_argument("--baseline-runs", type=int, default=5, help="fault-free runs")
    parser.add_argument("--fault-rate", type=float, default=0.20)
    parser.add_argument("--seed", type=int, default=2024, help="run i uses seed + i")
    parser.add_argument("--concurrency", type=int, default=16, help="max_concurrency")
    parser.add_argument("--call-timeout", type=float, default=0.2, help="seconds")
    parser.add_argument("--max-retries", type=int, default=7, help="invalid-output budget")
    parser.add_argument("--transient-retries", type=int, default=8, help="transient budget")
    args = parser.parse_args(argv)
    if not 0 <= args.fault_rate < 1 or args.call_timeout <= 0:
        parser.error("--fault-rate must be in [0, 1) and --call-timeout above 0")
    if not 1 <= args.baseline_runs <= args.runs:
        parser.error("--runs and --baseline-runs must be at least 1, --baseline-runs ≤ --runs")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Interleave fault-free runs and runs with faults, print the report; 1 if a run did
    not complete or was wrong."""
    args = parse_args(argv)
    retry = RetryPolicy(max_retries=args.transient_retries, initial_delay=0.005, max_delay=0.05)
    settings = Settings(
        sections=args.sections,
        paragraphs=args.paragraphs,
        concurrency=args.concurrency,
        call_timeout=args.call_timeout,
        max_retries=args.max_retries,
        retry=retry,
    )
    expected = one_run(settings, 0.0, args.seed).tasks  # also the warm-up
    every = math.ceil(args.runs / args.baseline_runs)
    clean, faulty = [], []
    for run in range(args.runs):
        if run % every == 0:
            clean.append(one_run(settings, 0.0, args.seed + run))
        faulty.append(one_run(settings, args.fault_rate, args.seed + run))
    instances = args.sections * args.paragraphs + args.sections + 1

    print("## Fault-injection benchmark results\n")
    print("\n".join(machine()))
    print(
        f"\nWorkload: S={args.sections} × P={args.paragraphs} = {instances:,} step instances; "
        f"{args.runs} runs with {args.fault_rate:.0%} of calls failing (seeds {args.seed}–"
        f"{args.seed + args.runs - 1}) and {len(clean)} fault-free runs among them (one "
        f"before every {every}); max_concurrency="
        f"{args.concurrency}, call_timeout={args.call_timeout:g} s, "
        "RetryPolicy(initial_delay=0.005, max_delay=0.05); provider errors: "
        f"{'openai ' + openai.__version__ if openai is not None else 'stand-ins'}.\n"
    )
    print(budget_line(args, instances) + "\n")
    print("\n".join(summary_table(clean, faulty, expected)) + "\n")
    print("\n".join(fault_table(faulty)))
    return verdict(clean, faulty, expected)


if __name__ == "__main__":
    sys.exit(main())
