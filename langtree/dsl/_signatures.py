"""The signature of a call-style command (``llm(model_key, override=false)``): its
parameters and how a call's arguments bind to them.

The commands themselves are declared in the structure stage, each in a module of its own
with its signature (`langtree.structure.call_commands`); the parser is handed their
table (`Signatures`) and checks every call against it, and the structure stage checks the
values that assembly variables supply through `Parameter.check()` — one home for both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from langtree.dsl._commands import Value, VariableReference, format_value

__all__ = [
    "ArgumentProblem",
    "CommandSignature",
    "Parameter",
    "Signatures",
]

_TYPE_NAMES = {int: "an integer", str: "a string", bool: "true or false"}


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentProblem:
    """Why a call does not fit its signature; ``argument`` is a position or a name."""

    message: str
    hint: str
    argument: int | str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Parameter:
    """One parameter of a call-style command."""

    name: str
    kind: type[int] | type[str] | type[bool]
    default: str | int | bool | None = None
    minimum: int | None = None

    @property
    def required(self) -> bool:
        """Whether a call must give this parameter."""
        return self.default is None

    def check(self, command: str, value: Value) -> tuple[str, str] | None:
        """Check a literal value; variables are checked once they are resolved.

        Returns:
            ``None`` when the value fits, else a message and a hint.
        """
        if isinstance(value, VariableReference):
            return None
        fits = isinstance(value, self.kind) and (self.kind is bool or not isinstance(value, bool))
        if not fits:
            expected = _TYPE_NAMES[self.kind]
            return (
                f"{command}() argument {self.name!r} must be {expected}, got {format_value(value)}",
                f"pass {expected} for {self.name!r}",
            )
        if self.minimum is not None and isinstance(value, int) and value < self.minimum:
            return (
                f"{command}() argument {self.name!r} must be at least {self.minimum}, "
                f"got {format_value(value)}",
                f"pass a whole number of {self.minimum} or more",
            )
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSignature:
    """A call-style command: its name, parameters and a one-line summary for hints."""

    name: str
    parameters: tuple[Parameter, ...]
    usage: str

    @property
    def call(self) -> str:
        """The call as lists of commands write it: ``llm(...)``, or ``input()`` for a
        command that takes no arguments."""
        return f"{self.name}(...)" if self.parameters else f"{self.name}()"

    def bind(
        self, arguments: tuple[Value, ...], named_arguments: tuple[tuple[str, Value], ...]
    ) -> dict[str, Value] | ArgumentProblem:
        """Match a call's arguments to the parameters, filling defaults.

        Returns:
            The value of every parameter by name, or the first problem found.
        """
        if len(arguments) > len(self.parameters):
            return self._problem(
                f"takes at most {len(self.parameters)} argument(s), got {len(arguments)}",
                argument=len(self.parameters),
            )
        bound: dict[str, Value] = {}
        for index, (parameter, value) in enumerate(zip(self.parameters, arguments, strict=False)):
            if problem := self._check(parameter, value, index):
                return problem
            bound[parameter.name] = value
        for name, value in named_arguments:
            if problem := self._bind_named(bound, name, value):
                return problem
        return self._fill_defaults(bound)

    def _bind_named(
        self, bound: dict[str, Value], name: str, value: Value
    ) -> ArgumentProblem | None:
        parameter = next((p for p in self.parameters if p.name == name), None)
        if parameter is None:
            return self._problem(f"got an unexpected argument {name!r}", argument=name)
        if name in bound:
            return self._problem(f"got multiple values for argument {name!r}", argument=name)
        bound[name] = value
        return self._check(parameter, value, name)

    def _fill_defaults(self, bound: dict[str, Value]) -> dict[str, Value] | ArgumentProblem:
        for parameter in self.parameters:
            if parameter.name in bound:
                continue
            if parameter.default is None:
                return self._problem(f"missing required argument {parameter.name!r}")
            bound[parameter.name] = parameter.default
        return bound

    def _check(
        self, parameter: Parameter, value: Value, argument: int | str
    ) -> ArgumentProblem | None:
        problem = parameter.check(self.name, value)
        if problem is None:
            return None
        return ArgumentProblem(message=problem[0], hint=problem[1], argument=argument)

    def _problem(self, what: str, *, argument: int | str | None = None) -> ArgumentProblem:
        return ArgumentProblem(
            message=f"{self.name}() {what}", hint=f"call it as {self.usage}", argument=argument
        )


Signatures: TypeAlias = Mapping[str, CommandSignature]
"""The call-style commands a parse accepts: each one's signature, by name."""
