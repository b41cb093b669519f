"""Checks of what a caller passes to a run besides its inputs: prompt variables and a
LangChain config, each refused with an ``ExecutionError`` that shows a correct one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from langchain_core.runnables import RunnableConfig

from langtree.errors import ExecutionError

__all__ = ["checked_config", "checked_variables"]


def checked_config(config: object) -> RunnableConfig:
    """``config`` once it is a mapping (LangChain checks its entries).

    Raises:
        ExecutionError: It is not a mapping.
    """
    if isinstance(config, Mapping):
        return cast(RunnableConfig, config)
    raise ExecutionError(
        f"config must be a LangChain RunnableConfig (a dict), not {type(config).__name__!r}\n"
        "  hint: e.g. config={'callbacks': [handler], 'tags': ['nightly'], 'run_name': 'report'}"
    )


def checked_variables(variables: object) -> Mapping[str, object]:
    """``variables`` (``None``: none) once it is a mapping with string names.

    Raises:
        ExecutionError: It is not a mapping, or a name is not a string.
    """
    if variables is None:
        return {}
    if not isinstance(variables, Mapping):
        problem = f"variables must be a dict of names to values, not {type(variables).__name__!r}"
    else:
        wrong = [name for name in variables if not isinstance(name, str)]
        if not wrong:
            return variables
        problem = f"variables are named by strings, got {wrong[0]!r}"
    raise ExecutionError(f"{problem}\n  hint: e.g. variables={{'company': 'Acme'}}")
