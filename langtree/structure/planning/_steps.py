"""Steps: the structured-output calls a run makes, one kind per node (DESIGN D3).

``@sequential``: one step per generated field, in declaration order. ``@parallel``: one
step for all generated fields (siblings that need each other move to follow-up steps,
see `langtree.structure.planning._plan`). A field with its own ``llm(...)`` or ``resample(...)``
gets a step of its own, and so does a node field whose class declares one of them in its
docstring, and a field computed by ``transform(...)`` (a step with no model call). A
generated node field is produced whole inside its step; a known one is descended into,
its elements generated as nodes of their own.

Inside a node that a step produces whole, a field that would have a step of its own (its
own ``llm``/``resample``, or a node field whose class declares one) gets that step too: a
*split* step on the node's tag that the step creating the node leaves the field to
(`StepDraft.creator`). It runs once per instance of the node the creating step made, one
per element for a list, as the steps of known elements do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from langtree.dsl import Modifier
from langtree.structure.call_commands._llm_command import LLM
from langtree.structure.call_commands._resample_command import RESAMPLE
from langtree.structure.commands._settings import NodeSettings
from langtree.structure.commands._transforms import Transform
from langtree.structure.planning._known import KnownFields
from langtree.structure.tree._registry import FieldKey, NodeRegistry
from langtree.structure.tree._tree import Node

__all__ = ["StepDraft", "WholePart", "draft_steps", "element_path", "step_id", "whole_parts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDraft:
    """A step before dependencies: the node, its fields and how it runs.

    Attributes:
        id: ``<node tag>:<field>+<field>`` (see `step_id()`), unique in a plan.
        position: The index of the first field among the node's fields.
        transform: The transform computing the step's one field (``None``: a model
            generates the fields).
        creator: For a split step, the node field whose step generates the step's node
            whole and so creates its instances (``None``: the node is the caller's, a
            default's or a command's, or descended into).
    """

    id: str
    node_tag: str
    fields: tuple[str, ...]
    modifier: Modifier
    model: str | None
    resample: int
    position: int
    transform: Transform | None = None
    creator: FieldKey | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WholePart:
    """A node that a step produces whole (see `whole_parts()`).

    Attributes:
        node: The node.
        made_by: The field of the step's node whose value holds ``node``.
    """

    node: Node
    made_by: FieldKey


def step_id(node_tag: str, fields: tuple[str, ...]) -> str:
    """The id of the step that generates ``fields`` of the node at ``node_tag``.

    Examples:
        >>> step_id("task.report", ("title", "summary"))
        'task.report:title+summary'
    """
    # The id is part of every call key (`langtree.runtime.durable._call_key`): a new
    # form would keep every journal and cache from replaying a single answer.
    return f"{node_tag}:{'+'.join(fields)}"


def draft_steps(
    registry: NodeRegistry, known: KnownFields, settings: dict[str, NodeSettings]
) -> list[StepDraft]:
    """The steps of every node that has generated fields, nodes in tree order, each step
    followed by the split steps inside the nodes it produces whole.

    A node's subtree is drafted only through its known node fields (a generated one is
    produced whole); the walk needs no recursion, however deep the tree.
    """
    drafts: list[StepDraft] = []
    pending = list(reversed(registry.roots()))
    while pending:
        node = pending.pop()
        node_known = known.get(node.tag, set())
        for draft in _node_steps(registry, node, node_known, settings):
            drafts += _with_split_steps(registry, known, settings, draft)
        # Only known node fields are descended into (D3): a generated one is produced whole
        # by its step, and the split steps inside it are drafted with that step.
        below = [registry.child(node, f.name) for f in node.fields if f.name in node_known]
        pending.extend(reversed([child for child in below if child is not None]))
    return drafts


def whole_parts(
    registry: NodeRegistry, draft: StepDraft, split: Callable[[Node, str], bool]
) -> Iterator[WholePart]:
    """The nodes that ``draft`` produces whole, in tree order: those its node fields hold,
    and the nodes below them, except below a field that ``split`` says has a split step
    of its own (that step produces the field, nodes and all).
    """
    holder = registry.get(draft.node_tag)
    assert holder is not None, "steps are drafted from the registry's nodes"
    tops = [(registry.child(holder, name), FieldKey(holder.tag, name)) for name in draft.fields]
    pending = [(child, made_by) for child, made_by in reversed(tops) if child is not None]
    while pending:
        node, made_by = pending.pop()
        yield WholePart(node=node, made_by=made_by)
        below = [
            child
            for node_field in node.fields
            if (child := registry.child(node, node_field.name)) is not None
            and not split(node, node_field.name)
        ]
        pending.extend((child, made_by) for child in reversed(below))


def _with_split_steps(
    registry: NodeRegistry,
    known: KnownFields,
    settings: Mapping[str, NodeSettings],
    draft: StepDraft,
) -> list[StepDraft]:
    """``draft``, then the split steps inside the nodes it produces whole, each followed
    by its own (walked with a stack: split steps may nest as deep as the classes do)."""

    def split(node: Node, name: str) -> bool:
        return name not in known.get(node.tag, set()) and _has_own_step(
            registry, node, name, settings
        )

    drafts: list[StepDraft] = []
    pending = [draft]
    while pending:
        current = pending.pop()
        drafts.append(current)
        if current.transform is not None:
            continue
        found = [
            _field_draft(registry, part.node, node_field.name, settings, part.made_by)
            for part in whole_parts(registry, current, split)
            for node_field in part.node.fields
            if split(part.node, node_field.name)
        ]
        pending.extend(reversed(found))
    return drafts


def _has_own_step(
    registry: NodeRegistry, node: Node, name: str, settings: Mapping[str, NodeSettings]
) -> bool:
    """Whether a generated field gets a step of its own: by its own ``llm``/``resample``,
    or, for a node field, by those its class declares."""
    setting = settings[node.tag]
    if name in setting.field_models or name in setting.field_resample:
        return True
    child = registry.child(node, name)
    return child is not None and bool(settings[child.tag].declared)


def _node_steps(
    registry: NodeRegistry, node: Node, known: set[str], settings: Mapping[str, NodeSettings]
) -> list[StepDraft]:
    setting = settings[node.tag]
    generated = [f.name for f in node.fields if f.name not in known]
    computed = [name for name in generated if name in setting.field_transforms]
    own = [name for name in generated if _has_own_step(registry, node, name, settings)]
    shared = [name for name in generated if name not in own and name not in computed]
    groups = (
        [[name] for name in shared]
        if setting.modifier == "sequential"
        else [shared]
        if shared
        else []
    )
    steps = [_draft(node, group, setting) for group in groups]
    steps += [_field_draft(registry, node, name, settings) for name in own]
    steps += [_transform_draft(node, name, setting) for name in computed]
    # In field order: the declared order chains a ``@sequential`` node's steps as they
    # are listed (`langtree.structure.planning._plan`).
    return sorted(steps, key=lambda step: step.position)


def _draft(node: Node, fields: list[str], setting: NodeSettings) -> StepDraft:
    """A step of the node's own settings for ``fields``."""
    return StepDraft(
        id=step_id(node.tag, tuple(fields)),
        node_tag=node.tag,
        fields=tuple(fields),
        modifier=setting.modifier,
        model=setting.model,
        resample=setting.resample,
        position=[f.name for f in node.fields].index(fields[0]),
    )


def _field_draft(
    registry: NodeRegistry,
    node: Node,
    name: str,
    settings: Mapping[str, NodeSettings],
    creator: FieldKey | None = None,
) -> StepDraft:
    """The step of one field of its own: the field's ``llm``/``resample`` first, then
    those a node field's class declares (its settings already apply an ``override=true``
    from above), then the node's."""
    setting = settings[node.tag]
    child = registry.child(node, name)
    declared = settings[child.tag] if child is not None else None
    model, resample = setting.model, setting.resample
    if declared is not None and LLM in declared.declared:
        model = declared.model
    if declared is not None and RESAMPLE in declared.declared:
        resample = declared.resample
    return StepDraft(
        id=step_id(node.tag, (name,)),
        node_tag=node.tag,
        fields=(name,),
        modifier=setting.modifier,
        model=setting.field_models.get(name, model),
        resample=setting.field_resample.get(name, resample),
        position=[f.name for f in node.fields].index(name),
        creator=creator,
    )


def _transform_draft(node: Node, name: str, setting: NodeSettings) -> StepDraft:
    return StepDraft(
        id=step_id(node.tag, (name,)),
        node_tag=node.tag,
        fields=(name,),
        modifier=setting.modifier,
        model=None,
        resample=1,
        position=[f.name for f in node.fields].index(name),
        transform=setting.field_transforms[name],
    )


def element_path(registry: NodeRegistry, tag: str) -> str:
    """A node tag with ``[*]`` after every list it lies in: ``task.report.sections[*]``."""
    node = registry.get(tag)
    parts: list[str] = []
    while node is not None:
        name = node.field_name or node.tag
        parts.append(name + "[*]" * node.list_depth)
        node = registry.get(node.parent) if node.parent else None
    return ".".join(reversed(parts))
