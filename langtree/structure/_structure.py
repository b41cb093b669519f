"""The structure stage's entry point: add root tasks, validate them, plan the run."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Collection, Iterator, Mapping

from langtree.errors import Diagnostic, StructureError
from langtree.structure._config import ConfigInput, StructureConfig
from langtree.structure.checks._analysis import Analysis, analyse, prompt_variable_names, replan
from langtree.structure.commands._placeholders import external_variables
from langtree.structure.planning._known import missing_inputs, supplied_fields
from langtree.structure.planning._plan import ExecutionPlan
from langtree.structure.tree._registry import NodeRegistry
from langtree.structure.tree._tree import Node, NodeField, build_task_nodes, task_tag
from langtree.structure.tree._tree_node import TreeNode, display_name

__all__ = ["TreeStructure"]


class TreeStructure:
    """Root tasks and everything reachable from them, checked before any model call.

    Args:
        config: Settings as a dict, a ``TypeMappingConfig``, or ``None`` for defaults.
        models: The model keys that ``llm(...)`` may name, when known.
        other_keys: Names of config settings a later stage reads (see
            ``StructureConfig.create``).
    """

    def __init__(
        self,
        config: ConfigInput = None,
        *,
        models: Collection[str] | None = None,
        other_keys: frozenset[str] = frozenset(),
    ) -> None:
        self.config = StructureConfig.create(config, other_keys=other_keys)
        self._models = models
        self._tasks: dict[str, type[TreeNode]] = {}
        self._registry = NodeRegistry()
        self._diagnostics: list[Diagnostic] = []
        self._analysis: Analysis | None = None

    def add(self, task_class: type[TreeNode]) -> None:
        """Introspect a root task and its subtree, and parse all its commands.

        Raises:
            StructureError: ``task_class`` is not a ``TreeNode`` subclass named
                ``Task<Name>``, or a task with its tag was already added.
            CommandParseError: A command in the subtree cannot be parsed; the error names
                the class, the field and the line.
        """
        tag = self._task_tag(task_class)
        with collector_paused():
            nodes, diagnostics = build_task_nodes(task_class, tag)
        self._tasks[tag] = task_class
        self._registry.add(nodes)
        self._diagnostics.extend(diagnostics)
        self._analysis = None

    def _task_tag(self, task_class: object) -> str:
        if not (isinstance(task_class, type) and issubclass(task_class, TreeNode)):
            raise _single_error(
                f"add() takes a TreeNode subclass, got {task_class!r}",
                "define the task as 'class TaskName(TreeNode): ...' and pass the class itself",
            )
        tag = task_tag(task_class.__name__)
        if tag is None:
            raise _single_error(
                f"Root task classes are named 'Task<Name>'; {task_class.__name__!r} is not",
                f"rename it, e.g. {_task_name_for(task_class.__name__)!r}, or add the task that "
                "holds it",
            )
        if tag in self._tasks:
            same = self._tasks[tag] is task_class
            raise _single_error(
                f"{display_name(task_class)!r} was already added"
                if same
                else f"Another task was already added as {tag!r}",
                "add each task once" if same else "give the task classes different names",
            )
        return tag

    def validate(self, inputs: Mapping[object, object] | None = None) -> tuple[Diagnostic, ...]:
        """Check every rule over all added tasks.

        Args:
            inputs: What the caller will supply, as for `plan()`. Without inputs, every
                field without a default is checked as generated: a ``@sequential`` field
                that needs a later one the caller supplies is an error until ``inputs``
                say so. ``validate(inputs)``, ``plan(inputs)`` and ``run(inputs)`` report
                the same problems.

        Returns:
            The warnings, sorted by location.

        Raises:
            StructureError: Holding every error found, sorted by location.
        """
        return self._checked(inputs).warnings

    def warnings(self) -> tuple[Diagnostic, ...]:
        """The warnings `validate()` returns, also when the tasks have errors."""
        return self._analyse().warnings

    def external_variables(self) -> tuple[str, ...]:
        """The external variables the root tasks' texts use, sorted: each ``{name}`` there
        that no field and no ``prompt`` mapping resolves, which ``variables=`` (or an
        ``@all->prompt.external`` command) gives a value."""
        analysis = self._analyse()
        names = prompt_variable_names(list(analysis.flows))
        return tuple(sorted(external_variables(self._registry, names, analysis.variables)))

    def get_node(self, tag: str) -> Node | None:
        """The node at ``tag`` (``task.report.sections``), or ``None``."""
        return self._registry.get(tag)

    @property
    def tasks(self) -> dict[str, type[TreeNode]]:
        """The added root task classes, by tag."""
        return dict(self._tasks)

    @property
    def nodes(self) -> NodeRegistry:
        """Every node of the added tasks."""
        return self._registry

    def plan(self, inputs: Mapping[object, object] | None = None) -> ExecutionPlan:
        """The steps the run would make, in a valid order.

        Args:
            inputs: What the caller will supply, by task class, tag or class name (dicts
                or instances); fields supplied there are not generated. Without inputs,
                every field without a default is planned as generated.

        Raises:
            StructureError: The tasks do not validate with these inputs (a dependency
                against the declared order may vanish once the caller supplies a field),
                or the inputs name no added task, hold something other than dicts and
                instances, or name fields the nodes lack.
        """
        return self._checked(inputs).plan

    def missing_inputs(
        self, inputs: Mapping[object, object] | None = None
    ) -> dict[str, tuple[NodeField, ...]]:
        """The required fields of the root tasks that only the caller can give, and
        ``inputs`` do not.

        No step generates such a field (it holds assets, or says ``! input()``), it has no
        default, and no ``value`` mapping writes it: a run without it would end with it
        missing.

        Args:
            inputs: What the caller will supply, as for `plan()`.

        Returns:
            The fields by task tag, in declaration order; tasks that lack none are left out.

        Raises:
            StructureError: The inputs name no added task, or hold values that do not fit.
        """
        supplied = supplied_fields(self._registry, self._inputs_by_tag(inputs or {}))
        return missing_inputs(self._registry, list(self._analyse().flows), supplied)

    def _checked(self, inputs: Mapping[object, object] | None) -> Analysis:
        """The analysis for these inputs; every error it holds is raised."""
        supplied = supplied_fields(self._registry, self._inputs_by_tag(inputs or {}))
        analysis = self._analyse()
        if supplied:
            with collector_paused():
                analysis = replan(analysis, self._registry, supplied)
        if analysis.errors:
            raise StructureError(analysis.errors)
        return analysis

    def _inputs_by_tag(self, inputs: Mapping[object, object]) -> dict[str, object]:
        by_tag: dict[str, object] = {}
        for key, value in inputs.items():
            tag = self._tag_of(key)
            if tag not in self._tasks:
                added = ", ".join(repr(t) for t in self._tasks) or "none"
                raise _single_error(
                    f"Inputs name {key!r}, which is not an added task",
                    f"the added tasks are {added}",
                )
            by_tag[tag] = value
        return by_tag

    def _checked_inputs(self, inputs: object) -> Mapping[object, object]:
        """``inputs`` (``None``: none) once it is a mapping that names each task once.

        Raises:
            StructureError: It is not a mapping, or keys name the same task (each such
                task is reported).
        """
        if inputs is None:
            return {}
        if not isinstance(inputs, Mapping):
            example = next(iter(self.tasks.values()), None)
            name = example.__name__ if example is not None else "TaskName"
            message = (
                "Inputs must be a dict of task classes (or tags) to values, not "
                f"{type(inputs).__name__!r}"
            )
            raise StructureError(
                [
                    Diagnostic(
                        severity="error",
                        message=message,
                        hint=f"pass e.g. {{{name}: {{'field': value}}}}",
                    )
                ]
            )
        twice = self._named_twice(inputs)
        if twice:
            raise StructureError(twice)
        return inputs

    def _named_twice(self, inputs: Mapping[object, object]) -> list[Diagnostic]:
        """A task given under two keys: by class and by tag, or by class and class name."""
        seen: dict[str, object] = {}
        found: list[Diagnostic] = []
        for key in inputs:
            tag = self._tag_of(key)
            if tag is not None and tag in seen:
                message = (
                    f"Inputs give the values of {tag!r} twice: as {_key_name(seen[tag])} "
                    f"and as {_key_name(key)}"
                )
                found.append(Diagnostic(severity="error", message=message, hint="keep one of them"))
            elif tag is not None:
                seen[tag] = key
        return found

    def _tag_of(self, key: object) -> str | None:
        """A task given by class, by tag (``task.report``) or by class name (``TaskReport``)."""
        if isinstance(key, str):
            return key if key in self._tasks else task_tag(key)
        return task_tag(getattr(key, "__name__", ""))

    def _analyse(self) -> Analysis:
        if self._analysis is None:
            with collector_paused():
                self._analysis = analyse(
                    self._registry, self.config, models=self._models, earlier=self._diagnostics
                )
        return self._analysis


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a stage builds its objects.

    Building a tree creates many objects that all survive; each time they pass the
    collector's thresholds it scans the whole heap, the user's classes included, and at a
    thousand nodes those scans cost more than the work itself. The objects built hold no
    reference cycles that need the collector, so pausing it changes nothing but the time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _task_name_for(name: str) -> str:
    """A valid root task name made from ``name``: ``Data_Processor`` → ``TaskDataProcessor``."""
    words = re.findall(r"[A-Za-z][a-z0-9]*|[0-9]+", name.removeprefix("Task"))
    camel = "".join(word[:1].upper() + word[1:] for word in words)
    return "Task" + (camel if camel[:1].isalpha() else "Node" + camel)


def _single_error(message: str, hint: str) -> StructureError:
    return StructureError([Diagnostic(severity="error", message=message, hint=hint)])


def _key_name(key: object) -> str:
    """An inputs key as the caller wrote it: a class by its name, a string quoted."""
    return key.__name__ if isinstance(key, type) else repr(key)
