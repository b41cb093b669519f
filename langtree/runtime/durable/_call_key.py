"""Call keys: what identifies a model call, whatever run makes it.

A key is the SHA-256 of everything that decides the answer a call asks for:

- the step and the node instance (``task.report.sections[2]``), the fields it generates
  and the sample (so that ``resample(n)`` makes n distinct calls, never one);
- the rendered messages, which hold every value the prompt shows: a changed docstring,
  description or input changes the key of the calls that show it, and of the calls that
  read their outputs, because their messages change in turn — and nothing else;
- the model: its key in the provider, the class and parameters LangChain itself keys its
  cache on (``_get_llm_string``: model name, temperature, ...; secrets masked), and the
  structured-output schema and method.

The retry feedback after an invalid answer is not in the key: a call's answers are
numbered, and replaying answer 1 gives the same feedback again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

__all__ = ["call_key", "model_identity", "step_identity"]


def step_identity(model_key: str, model: object, schema: dict[str, Any], method: str) -> str:
    """The part of a key that every call of one plan step shares: the model and the
    structured output it is asked for."""
    return _digest(
        {
            "model_key": model_key,
            "model": model_identity(model),
            # The schema and method decide the form of the answer: an answer given for
            # another schema would not validate, or would hold other fields.
            "schema": schema,
            "method": method,
        }
    )


def call_key(
    step: str,
    *,
    step_id: str,
    node_path: str,
    fields: Sequence[str],
    sample: int,
    messages: Sequence[BaseMessage],
) -> str:
    """The key of one call (``step``: its `step_identity()`)."""
    return _digest(
        {
            "step": step,
            "step_id": step_id,
            "node_path": node_path,
            # A step split differently (a field given a step of its own) asks for
            # something else, even where its messages read the same.
            "fields": list(fields),
            "sample": sample,
            # Type and content only: the prompt's messages carry nothing else that reaches
            # the model (an id, where one is set, would change from run to run). Content
            # blocks are content: a changed image changes the key.
            "messages": [{"type": m.type, "content": m.content} for m in messages],
        }
    )


def model_identity(model: object) -> str:
    """A model's class and parameters, as text; wrappers (``bind``, ``with_retry``,
    ``with_fallbacks``, configurable models) give the identities of what they wrap."""
    parts: list[str] = []
    # Breadth first, in the order the wrappers hold their parts, so that one chain of
    # wrappers always gives one text.
    pending = [model]
    while pending:
        current = pending.pop(0)
        parts.append(f"{type(current).__module__}.{type(current).__qualname__}")
        # A chat model's own cache key already holds its parameters (and masks its
        # secrets): what it wraps, if anything, is not read further. Looked up on the
        # class: a binding hands every attribute it lacks on to the model it wraps, whose
        # key would leave out the binding's own parameters (``bind(temperature=0.9)``).
        if callable(getattr(type(current), "_get_llm_string", None)):
            parts.append(str(current._get_llm_string()))  # type: ignore[attr-defined]
            continue
        kwargs = getattr(current, "kwargs", None)
        if isinstance(kwargs, dict) and kwargs:
            parts.append(json.dumps(kwargs, sort_keys=True, default=_stable_text))
        # What ``bind``/``with_retry`` (``bound``), ``with_fallbacks`` (``runnable``) and a
        # configurable model (``default_runnable``) wrap.
        for name in ("bound", "runnable", "default_runnable"):
            inner = getattr(current, name, None)
            if inner is not None:
                pending.append(inner)
        pending.extend(getattr(current, "fallbacks", None) or ())
    return "\n".join(parts)


def _stable_text(value: object) -> str:
    """A parameter JSON cannot write, as text that is the same in every run: a class or a
    function by its name, an object whose class writes no text of its own by its class
    (Python's default text holds its address, which changes from run to run)."""
    if isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__")):
        return f"{value.__module__}.{value.__qualname__}"
    if type(value).__repr__ is object.__repr__:
        return f"{type(value).__module__}.{type(value).__qualname__}()"
    return repr(value)


def _digest(data: dict[str, object]) -> str:
    # Sorted keys: the key does not depend on the order a dict was built in.
    # ``surrogatepass``: a lone surrogate in a message (which cannot be encoded as
    # UTF-8) still gives a key, the same one every time.
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=_stable_text)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
