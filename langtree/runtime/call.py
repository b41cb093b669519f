"""One step instance's model calls: invoke, validate, retry with the error fed back.

The step's chat model is bound once per plan step to the cleaned JSON schema of its
structured-output class (:func:`bind_step`, see :func:`langtree.runtime.schema.tool_schema`)
as the one tool it must call, so each call is the model's own ``ainvoke`` and the reply
is the raw message, kept for the trace; the arguments of its tool call are validated with
the pydantic class itself. A model without ``bind_tools`` is bound with
``with_structured_output(schema, include_raw=True)`` instead.
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

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers.openai_tools import JsonOutputKeyToolsParser
from langchain_core.outputs import ChatGeneration
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    patch_config,
    set_config_context,
)
from langchain_core.runnables.utils import coro_with_context
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from langtree.errors import ExecutionError
from langtree.prompts.preview import StepPrompt
from langtree.runtime.metadata import NODE_PATH_KEY
from langtree.runtime.result import TraceRecord
from langtree.runtime.schema import tool_schema
from langtree.structure.tree import title_from_name

__all__ = ["StepCall", "bind_step", "feedback_message"]

StepRunnable = Runnable[LanguageModelInput, Any]
"""A chat model bound to a step's tool (it returns the ``AIMessage``), or bound with
``with_structured_output(..., include_raw=True)`` (it returns a dict)."""


def bind_step(model: BaseChatModel, output: type[BaseModel]) -> tuple[StepRunnable, str | None]:
    """The model bound to the step's tool, and the tool's name.

    The model is made to call the tool (``tool_choice`` names it), as
    ``with_structured_output`` binds it, without the parsers that would run per call.
    A model that does not implement ``bind_tools`` is bound with
    ``with_structured_output(schema, include_raw=True)``, and the name is ``None``.
    """
    schema = tool_schema(output)
    name: str = convert_to_openai_tool(schema)["function"]["name"]
    try:
        bound = model.bind_tools(
            [schema],
            tool_choice=name,
            ls_structured_output_format={
                "kwargs": {"method": "function_calling"},
                "schema": schema,
            },
        )
    except NotImplementedError:
        return model.with_structured_output(schema, include_raw=True), None
    return bound, name


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCall:
    """Everything needed to call the model for the instances of one plan step.

    Attributes:
        runnable: The model bound to the step's structured-output schema
            (:func:`bind_step`).
        tool_name: The name of the step's tool when ``runnable`` is the model bound to
            it (its replies are messages); ``None`` when it is bound with
            ``with_structured_output(..., include_raw=True)``.
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
    tool_name: str | None = None

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
        raw: object
        if self.tool_name is None:
            async with self.semaphore:
                started = time.perf_counter()
                reply = await self.runnable.ainvoke(messages, config=config)
                latency = time.perf_counter() - started
            if not isinstance(reply, dict):
                reply = {"raw": None, "parsed": reply, "parsing_error": None}
            raw = reply.get("raw")
            valid, error = self._validate(reply.get("parsed"), reply.get("parsing_error"))
        else:
            async with self.semaphore:
                started = time.perf_counter()
                raw, parsed, parsing_error = await self._call_tool(messages, config, self.tool_name)
                latency = time.perf_counter() - started
            valid, error = self._validate(parsed, parsing_error)
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

    async def _call_tool(
        self, messages: list[BaseMessage], config: RunnableConfig, name: str
    ) -> tuple[AIMessage, object, object]:
        """One call of the model bound to the tool: the reply, its arguments, the problem.

        The call is traced as ``with_structured_output`` traces it: a chain run named
        ``run_name`` whose output is ``{"raw", "parsed", "parsing_error"}``, with the
        model's run as its child.
        """
        config = ensure_config(config)
        manager = get_async_callback_manager_for_config(config)
        run = await manager.on_chain_start(
            None, messages, name=config.get("run_name"), run_id=config.pop("run_id", None)
        )
        try:
            child = patch_config(config, callbacks=run.get_child())
            with set_config_context(child) as context:
                reply = await coro_with_context(
                    self.runnable.ainvoke(messages, config=child), context, create_task=True
                )
            if not isinstance(reply, AIMessage):
                raise ExecutionError(
                    f"The model bound to {name!r} returned a {type(reply).__name__}, "
                    "not a chat message"
                )
            parsed, parsing_error = self._tool_args(reply, name)
        except BaseException as error:
            await run.on_chain_error(error)
            raise
        await run.on_chain_end({"raw": reply, "parsed": parsed, "parsing_error": parsing_error})
        return reply, parsed, parsing_error

    @staticmethod
    def _tool_args(reply: AIMessage, name: str) -> tuple[object, object]:
        """The arguments of the reply's first call of the tool, or why there are none.

        Reads the reply as ``with_structured_output``'s parser does: the first tool call
        of that name, else ``None``; provider tool calls the message did not parse are
        parsed here (their error is the problem).
        """
        if reply.tool_calls:
            for call in reply.tool_calls:
                if call["name"] == name:
                    return call["args"], None
            return None, None
        if "tool_calls" not in reply.additional_kwargs:
            return None, None
        parser = JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
        try:
            return parser.parse_result([ChatGeneration(message=reply)]), None
        except OutputParserException as error:
            return None, error

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
