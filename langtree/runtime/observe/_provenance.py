"""Provenance (DESIGN D14): what wrote each value of a run, in write order.

Every value written into a run's state is recorded once per write, through one
`ProvenanceLog` held by the run: the caller's inputs and the defaults filled in when
the run starts, each step's accepted output, and each ``value`` target a mapping writes.
A later write wins (it is the value the result holds) and the earlier ones are kept.

A value is addressed by its **field path**: the instance path that
`instance_text()` prints, a dot, and the field, with one
``[i]`` per list level, e.g. ``task.summarize_report.sections[0].summary`` or
``task.write_digest.section_summaries``. Fields holding nodes are not recorded as a whole:
their nodes' fields are (``task.report.sections[1].title``); an empty list of nodes is
recorded as the list itself.

Everything here is plain data: records convert to JSON with `ProvenanceRecord.to_dict()`.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic_core import to_jsonable_python

from langtree.dsl import VariableMapping, format_value
from langtree.errors import LangTreeError
from langtree.prompts import (
    Address,
    Pending,
    RunState,
    contains_pending,
    elements,
    instance_text,
    to_plain,
)
from langtree.structure import Flow, Node, NodeRegistry, Transform

__all__ = [
    "ProvenanceKind",
    "ProvenanceLog",
    "ProvenanceRecord",
    "UnknownPathError",
    "prompt_sha256",
]

ProvenanceKind = Literal["input", "default", "step", "mapping", "literal", "transform"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvenanceRecord:
    """One write of one value.

    Attributes:
        kind: What wrote it: the caller's ``input``, a field's ``default``, a ``step``'s
            output, a ``mapping`` of an ``@each``/``@all`` command, a ``literal`` such a
            command's mapping sends (``value.status="draft"``), or a field's
            ``transform``.
        path: The field path, e.g. ``task.report.sections[0].summary``.
        value: The value written, as plain data.
        at: When it was written (UTC).
        step_id: The plan step (steps and transforms).
        model: The provider's key of the step's model (steps only).
        prompt_sha256: SHA-256 of the step prompt's text (``StepPrompt.text``; steps only).
        attempt: The attempt whose output was accepted (steps only; for a resampled step
            the number of calls made).
        sample: How many samples the value aggregates (steps only; 1: not resampled).
        replayed: Whether the step's accepted answers came from the run's journal or
            response cache, not from a model call of this run (steps only).
        command: The command's text as written (mappings and literals).
        source: The mapping's source path, e.g. ``sections.summary``, or the literal as
            written, e.g. ``"draft"`` (mappings and literals).
        location: Where the command is written: ``Class.field``, or ``Class`` for its
            docstring (mappings and transforms).
        expression: The transform's Jinja2 expression (transforms only).
    """

    kind: ProvenanceKind
    path: str
    value: object
    at: datetime
    step_id: str | None = None
    model: str | None = None
    prompt_sha256: str | None = None
    attempt: int | None = None
    sample: int | None = None
    replayed: bool | None = None
    command: str | None = None
    source: str | None = None
    location: str | None = None
    expression: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-ready data (``at`` in ISO 8601); unset details are left out."""
        data: dict[str, object] = {
            "kind": self.kind,
            "path": self.path,
            "value": to_jsonable_python(self.value),
            "at": self.at.isoformat(),
        }
        for name in (
            "step_id",
            "model",
            "prompt_sha256",
            "attempt",
            "sample",
            "replayed",
            "command",
            "source",
            "location",
            "expression",
        ):
            detail = getattr(self, name)
            if detail is not None:
                data[name] = detail
        return data


class UnknownPathError(LangTreeError, KeyError):
    """A field path that no write of the run recorded."""

    def __init__(self, path: str, known: list[str]) -> None:
        close = difflib.get_close_matches(path, known, n=3, cutoff=0.6)
        hint = (
            "did you mean " + ", ".join(repr(name) for name in close) + "?"
            if close
            else "paths look like 'task.report.sections[0].summary'; "
            "see RunResult.provenance_paths()"
        )
        self.path = path
        self.message = f"No value was written at {path!r}\n  hint: {hint}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def prompt_sha256(text: str) -> str:
    """The hex SHA-256 of a prompt's text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ProvenanceLog:
    """The records of one run, in write order: the one place every write goes through.

    Args:
        registry: The nodes.
        on_record: Told of each record as it is added (a streamed run's mapping events).
    """

    def __init__(
        self,
        registry: NodeRegistry,
        *,
        on_record: Callable[[ProvenanceRecord], None] | None = None,
    ) -> None:
        self.registry = registry
        self.records: list[ProvenanceRecord] = []
        self.on_record = on_record

    def record_start(self, state: RunState, inputs: Mapping[str, object]) -> None:
        """Record the state a run starts from: supplied values as inputs, the rest as
        defaults."""
        supplied = _Snapshot(self.registry, {})
        for root in self.registry.roots():
            supplied.add_node(root, _to_dict(to_plain(inputs.get(root.tag, {}))), root.tag)
        at = _now()
        for path, value in self.snapshot(state).items():
            kind: ProvenanceKind = "input" if path in supplied.values else "default"
            self._add(kind, path, value, at)

    def record_step(
        self,
        address: Address,
        values: Mapping[str, object],
        *,
        step_id: str,
        model: str,
        prompt_text: str,
        attempt: int,
        sample: int,
        replayed: bool = False,
    ) -> None:
        """Record the fields a step wrote into an instance."""
        self._record_instance(
            "step",
            address,
            values,
            step_id=step_id,
            model=model,
            prompt_sha256=prompt_sha256(prompt_text),
            attempt=attempt,
            sample=sample,
            replayed=replayed,
        )

    def record_transform(
        self, address: Address, values: Mapping[str, object], *, step_id: str, transform: Transform
    ) -> None:
        """Record the field a transform computed for an instance."""
        self._record_instance(
            "transform",
            address,
            values,
            step_id=step_id,
            location=transform.location,
            expression=transform.expression,
        )

    def _record_instance(
        self,
        kind: ProvenanceKind,
        address: Address,
        values: Mapping[str, object],
        **details: object,
    ) -> None:
        """Record fields written into one instance, each node field's nodes field by field."""
        node = self.registry.get(address.tag)
        if node is None:
            return
        snapshot = _Snapshot(self.registry, {})
        snapshot.add_node(node, dict(values), instance_text(self.registry, address))
        at = _now()
        for path, value in snapshot.values.items():
            self._add(kind, path, value, at, **details)

    def snapshot(
        self, state: RunState, flow: Flow | None = None, at: Sequence[Address] = ()
    ) -> dict[str, object]:
        """Every value the state holds, by field path (plain copies); with ``flow``, only
        those of the root task its ``value`` targets write into; with ``at``, only those
        of these instances."""
        snapshot = _Snapshot(self.registry, {})
        if at:
            for address in at:
                node, values = self.registry.get(address.tag), state.instance(address)
                if node is not None and values is not None:
                    snapshot.add_node(node, values, instance_text(self.registry, address))
            return snapshot.values
        written = _written_root(flow) if flow is not None else None
        for root in self.registry.roots():
            if written is None or root.tag == written:
                snapshot.add_node(root, state.roots.get(root.tag, {}), root.tag)
        return snapshot.values

    def record_mapping(
        self,
        before: Mapping[str, object],
        state: RunState,
        flow: Flow,
        instances: Sequence[Address] = (),
    ) -> None:
        """Record the values a command's ``value`` targets changed since ``before`` (taken
        with the same ``instances``, see `snapshot()`)."""
        at = _now()
        origin = flow.command.origin
        location = origin.class_name + (f".{origin.field_name}" if origin.field_name else "")
        for path, value in self.snapshot(state, flow, instances).items():
            if path in before and before[path] == value:
                continue
            source = _source_for(flow, path)
            self._add(
                "literal" if source.is_literal else "mapping",
                path,
                value,
                at,
                command=flow.command.extracted.text.strip(),
                source=source.text,
                location=location,
            )

    def history(self, path: str) -> tuple[ProvenanceRecord, ...]:
        """The writes at ``path`` in order (the last one holds the result's value).

        Raises:
            UnknownPathError: Nothing was written there.
        """
        found = tuple(record for record in self.records if record.path == path)
        if not found:
            raise UnknownPathError(path, self.paths())
        return found

    def paths(self) -> list[str]:
        """Every field path written, in order of the first write."""
        return list(dict.fromkeys(record.path for record in self.records))

    def _add(
        self, kind: ProvenanceKind, path: str, value: object, at: datetime, **details: object
    ) -> None:
        record = ProvenanceRecord(kind=kind, path=path, value=value, at=at, **details)  # type: ignore[arg-type]
        self.records.append(record)
        if self.on_record is not None:
            self.on_record(record)


class _Snapshot:
    """Flattens node values into ``{field path: plain value}``."""

    def __init__(self, registry: NodeRegistry, values: dict[str, object]) -> None:
        self.registry = registry
        self.values = values

    def add_node(self, node: Node, values: Mapping[str, object], prefix: str) -> None:
        """Add the values of a node instance at ``prefix``, and of every node below it
        (walked without recursion: trees may nest deeper than Python's limit)."""
        pending = [(node, values, prefix)]
        while pending:
            pending += reversed(list(self._node_values(*pending.pop())))

    def _node_values(
        self, node: Node, values: Mapping[str, object], prefix: str
    ) -> Iterator[tuple[Node, Mapping[str, object], str]]:
        """Add a node's own values; yields the node instances below it."""
        shapes = {node_field.name: node_field for node_field in node.fields}
        for name, value in values.items():
            if isinstance(value, Pending) or contains_pending(value):
                continue
            path = f"{prefix}.{name}"
            child = self.registry.child(node, name) if name in shapes else None
            if child is None or value is None or value == []:
                self.values[path] = _plain(value)
                continue
            for indices, element in _elements(value, shapes[name].shape.list_depth):
                if isinstance(element, dict):
                    yield child, element, path + "".join(f"[{i}]" for i in indices)


def _elements(value: object, depth: int) -> Iterator[tuple[tuple[int, ...], object]]:
    for indices, element in elements(value, depth):
        if None not in indices:
            yield tuple(index for index in indices if index is not None), element


def _written_root(flow: Flow) -> str | None:
    """The root task a command's values land in (``None``: not known, look at all)."""
    if flow.destination is None:
        return None
    return ".".join(flow.destination.node.tag.split(".")[:2])


@dataclass(frozen=True, slots=True, kw_only=True)
class _Source:
    """What a mapping wrote from: a source path, or a literal as written (``"draft"``)."""

    text: str | None
    is_literal: bool = False


def _source_for(flow: Flow, path: str) -> _Source:
    """The source of the mapping whose target field the path ends in (or passes)."""
    names = [part.split("[")[0] for part in path.split(".")]
    sources = []
    for mapping_flow in flow.mappings:
        if mapping_flow.scope != "value" or mapping_flow.target is None:
            continue
        target = mapping_flow.target.fields[-1].name if mapping_flow.target.fields else None
        if target is not None and target in names:
            return _mapping_source(mapping_flow.mapping)
        sources.append(_mapping_source(mapping_flow.mapping).text or "")
    return _Source(text=", ".join(sources) or None)


def _mapping_source(mapping: VariableMapping) -> _Source:
    if mapping.literal is not None:
        return _Source(text=format_value(mapping.literal), is_literal=True)
    return _Source(text=mapping.source_path)


def _plain(value: object) -> object:
    return copy.deepcopy(to_jsonable_python(value, fallback=repr))


def _to_dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _now() -> datetime:
    return datetime.now(UTC)
