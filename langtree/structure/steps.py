"""Steps: the structured-output calls a run makes, one kind per node (DESIGN D3).

``@sequential``: one step per generated field, in declaration order. ``@parallel``: one
step for all generated fields (siblings that need each other move to follow-up steps,
see `langtree.structure.plan`). A field with its own ``llm(...)`` or ``resample(...)``
gets a step of its own, and so does a field computed by ``transform(...)`` (a step with no
model call). A generated node field is produced whole inside its step; a known
one is descended into, its elements generated as nodes of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from langtree.dsl.commands import Modifier
from langtree.structure.known import KnownFields
from langtree.structure.registry import NodeRegistry
from langtree.structure.settings import NodeSettings
from langtree.structure.transforms import Transform
from langtree.structure.tree import Node

__all__ = ["StepDraft", "draft_steps", "element_path", "step_id"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepDraft:
    """A step before dependencies: the node, its fields and how it runs.

    Attributes:
        id: ``<node tag>:<field>+<field>`` (see `step_id()`), unique in a plan.
        position: The index of the first field among the node's fields.
        transform: The transform computing the step's one field (``None``: a model
            generates the fields).
    """

    id: str
    node_tag: str
    fields: tuple[str, ...]
    modifier: Modifier
    model: str | None
    resample: int
    position: int
    transform: Transform | None = None


def step_id(node_tag: str, fields: tuple[str, ...]) -> str:
    """The id of the step that generates ``fields`` of the node at ``node_tag``.

    Examples:
        >>> step_id("task.report", ("title", "summary"))
        'task.report:title+summary'
    """
    return f"{node_tag}:{'+'.join(fields)}"


def draft_steps(
    registry: NodeRegistry, known: KnownFields, settings: dict[str, NodeSettings]
) -> list[StepDraft]:
    """The steps of every node that has generated fields, nodes in tree order.

    A node's subtree is drafted only through its known node fields (a generated one is
    produced whole); the walk needs no recursion, however deep the tree.
    """
    drafts: list[StepDraft] = []
    pending = list(reversed(registry.roots()))
    while pending:
        node = pending.pop()
        node_known = known.get(node.tag, set())
        drafts.extend(_node_steps(node, node_known, settings[node.tag]))
        below = [registry.child(node, f.name) for f in node.fields if f.name in node_known]
        pending.extend(reversed([child for child in below if child is not None]))
    return drafts


def _node_steps(node: Node, known: set[str], setting: NodeSettings) -> list[StepDraft]:
    generated = [f.name for f in node.fields if f.name not in known]
    computed = [name for name in generated if name in setting.field_transforms]
    own = [
        name for name in generated if name in setting.field_models or name in setting.field_resample
    ]
    shared = [name for name in generated if name not in own and name not in computed]
    groups = (
        [[name] for name in shared]
        if setting.modifier == "sequential"
        else [shared]
        if shared
        else []
    )
    steps = [_draft(node, group, setting) for group in groups]
    steps += [_draft(node, [name], setting) for name in own]
    steps += [_transform_draft(node, name, setting) for name in computed]
    return sorted(steps, key=lambda step: step.position)


def _draft(node: Node, fields: list[str], setting: NodeSettings) -> StepDraft:
    first = fields[0]
    return StepDraft(
        id=step_id(node.tag, tuple(fields)),
        node_tag=node.tag,
        fields=tuple(fields),
        modifier=setting.modifier,
        model=setting.field_models.get(first, setting.model) if len(fields) == 1 else setting.model,
        resample=setting.field_resample.get(first, setting.resample)
        if len(fields) == 1
        else setting.resample,
        position=[f.name for f in node.fields].index(first),
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
