"""One step instance's model calls: invoke, validate, retry with the error fed back.

The step's chat model is bound once per plan step to the cleaned JSON schema of its
structured-output class (``with_structured_output(schema, include_raw=True)``, see
:func:`langtree.runtime.schema.tool_schema`), so the raw reply stays available for the
trace; the arguments the model sends are validated with the pydantic class itself.
Output that is missing (the model made no tool call) or does not validate is retried up
to ``max_retries`` times, each retry adding one human message that names the problem;
what a model itself raises propagates unchanged.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ValidationError

from langtree.prompts.preview import StepPrompt
from langtree.runtime.metadata import NODE_PATH_KEY
from langtree.runtime.result import TraceRecord
from langtree.structure.tree import title_from_name

__all__ = ["StepCall", "feedback_message"]

StepRunnable = Runnable[LanguageModelInput, dict[str, Any] | BaseModel]
"""A chat model bound to a step's class with ``include_raw=True`` (it returns a dict)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCall:
    """Everything needed to call the model for the instances of one plan step.

    Attributes:
        runnable: The model bound to the step's structured-output schema.
        output: The step's pydantic class, which validates the model's arguments.
        model: The provider's key of the model.
        max_retries: How many times invalid output is asked for again.
        semaphore: Caps the model calls in flight across the run.
        record: Receives each call's trace record as soon as the call returns.
    """

    runnable: StepRunnable
    output: type[BaseModel]
    model: str
    max_retries: int
    semaphore: asyncio.Semaphore
    record: Callable[[TraceRecord], None]

    async def generate(
        self, prompt: StepPrompt, *, sample: int = 1
    ) -> tuple[BaseModel | None, list[TraceRecord]]:
        """Call until the output validates or the retries are spent.

        Args:
            prompt: The instance's messages.
            sample: Which sample of a resampled step this is (1 when not resampled);
                recorded in the trace.

        Returns:
            The validated output (``None`` when every attempt failed), and the records
            of the attempts.
        """
        attempts: list[TraceRecord] = []
        messages = list(prompt.messages)
        for attempt in range(1, self.max_retries + 2):
            parsed, record = await self._attempt(prompt, messages, attempt, sample)
            self.record(record)
            attempts.append(record)
            if parsed is not None:
                return parsed, attempts
            assert record.error is not None
            messages = [*prompt.messages, feedback_message(record.error, prompt.fields)]
        return None, attempts

    async def _attempt(
        self, prompt: StepPrompt, messages: list[BaseMessage], attempt: int, sample: int
    ) -> tuple[BaseModel | None, TraceRecord]:
        config: RunnableConfig = {
            "metadata": {NODE_PATH_KEY: prompt.node_path},
            "run_name": f"{prompt.node_path}: {', '.join(prompt.fields)}",
        }
        async with self.semaphore:
            started = time.perf_counter()
            reply = await self.runnable.ainvoke(messages, config=config)
            latency = time.perf_counter() - started
        if not isinstance(reply, dict):
            reply = {"raw": None, "parsed": reply, "parsing_error": None}
        raw = reply.get("raw")
        valid, error = self._validate(reply.get("parsed"), reply.get("parsing_error"))
        record = TraceRecord(
            step_id=prompt.step_id,
            node_path=prompt.node_path,
            fields=prompt.fields,
            model=self.model,
            attempt=attempt,
            sample=sample,
            messages=tuple(messages),
            token_count=prompt.token_count,
            usage=dict(raw.usage_metadata)
            if isinstance(raw, AIMessage) and raw.usage_metadata
            else None,
            latency=latency,
            raw_output=_raw_text(raw),
            error=error,
        )
        return valid, record

    def _validate(
        self, parsed: object, parsing_error: object
    ) -> tuple[BaseModel | None, str | None]:
        """The parsed arguments as the step's class, or why they are not usable."""
        if isinstance(parsed, self.output):
            return parsed, None
        if isinstance(parsed, BaseModel):
            parsed = parsed.model_dump()
        if isinstance(parsed, dict):
            try:
                return self.output.model_validate(parsed), None
            except ValidationError as error:
                return None, _problem(error)
        return None, _problem(parsing_error)


def feedback_message(problem: str, fields: tuple[str, ...]) -> HumanMessage:
    """The human message a retry adds after an invalid answer.

    >>> print(feedback_message("- summary: Field required", ("summary",)).content)
    Your previous answer could not be used:
    - summary: Field required
    <BLANKLINE>
    Write Summary again, as structured output.
    """
    titles = ", ".join(title_from_name(name) for name in fields)
    return HumanMessage(
        content=f"Your previous answer could not be used:\n{problem}\n\n"
        f"Write {titles} again, as structured output."
    )


def _problem(error: object) -> str:
    """Why an output was rejected, one line per validation error."""
    if isinstance(error, ValidationError):
        return "\n".join(
            f"- {'.'.join(str(part) for part in detail['loc']) or '(answer)'}: {detail['msg']}"
            for detail in error.errors(include_url=False)
        )
    if error is not None:
        return f"- {error}"
    return "- the answer held no structured output (no tool call)"


def _raw_text(raw: object) -> str:
    """The tool call's arguments as JSON (or the invalid call's text), else the text."""
    if not isinstance(raw, AIMessage):
        return repr(raw)
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0]["args"], ensure_ascii=False, default=str)
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    return raw.text
