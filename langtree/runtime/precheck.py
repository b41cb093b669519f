"""What a run checks before its first model call, without assembling any prompt.

The dry run's schedule is replayed on a copy of the inputs: every command is carried out
where the dry run carries it out (mapped values that do not fit fail here), and each step
instance that the dry run would show is marked as pending. Instead of rendering its
prompt, only the texts that a prompt shows at the root task's level are scanned for
``{name}``: the root's docstring, the descriptions of the root fields the step generates,
and the description of the root field that leads down to the step's node. A name there
that is neither sent by a ``prompt`` mapping, nor a field of the root, nor an external
value (``variables``, or an ``@all->prompt.external`` command carried out by then) is a
missing external variable — exactly the names the assembly of those prompts would report
(see :mod:`langtree.prompts.assembly`).
"""

from __future__ import annotations

from langtree.prompts.dataflow import EXTERNAL
from langtree.prompts.preview import PromptSetup
from langtree.prompts.schedule import dry_run
from langtree.prompts.state import RunState
from langtree.structure.analysis import prompt_variable_names
from langtree.structure.placeholders import TEMPLATE_VARIABLES, find_placeholders
from langtree.structure.plan import PlanStep
from langtree.structure.registry import NodeRegistry

__all__ = ["missing_external_variables"]


def missing_external_variables(setup: PromptSetup) -> dict[str, set[str]]:
    """The external variables the run's prompts would use and nothing supplies.

    Returns:
        Each missing name, with the root task tags whose texts use it.

    Raises:
        ExecutionError: A command's data does not fit (see
            :func:`~langtree.prompts.dataflow.apply_flow`).
    """
    registry, variables = setup.registry, setup.variables
    state = RunState.start(registry, setup.inputs)
    flows = list(setup.analysis.flows)
    prompt_names = prompt_variable_names(flows)
    texts: dict[str, list[str]] = {}
    missing: dict[str, set[str]] = {}
    for step, _ in dry_run(registry, flows, setup.plan.steps, state, setup.config):
        if step.id in texts:
            continue
        root = registry.path(step.node_tag)[0]
        sent = prompt_names.get(root.tag, set())
        supplied = (
            sent
            | {node_field.name for node_field in root.fields}
            | set(variables)
            | {name for (address, name) in state.prompt_values if address == EXTERNAL}
        )
        texts[step.id] = _root_texts(registry, step)
        for text in texts[step.id]:
            for placeholder in find_placeholders(text):
                name = placeholder.name
                if name not in TEMPLATE_VARIABLES and not _supplied(name, supplied, sent):
                    missing.setdefault(name, set()).add(root.tag)
    return missing


def _root_texts(registry: NodeRegistry, step: PlanStep) -> list[str]:
    """The texts a prompt of ``step`` shows at its root task's level."""
    path = registry.path(step.node_tag)
    root = path[0]
    texts = [root.text]
    names = step.fields if len(path) == 1 else (path[1].field_name or "",)
    for name in names:
        node_field = root.field(name)
        if node_field is not None:
            texts.append(node_field.description)
    return texts


def _supplied(name: str, supplied: set[str], sent: set[str]) -> bool:
    """Whether ``name`` resolves (``{name_2}``: the second source a ``prompt`` mapping
    sends for ``name``)."""
    base, _, number = name.rpartition("_")
    return name in supplied or (bool(base) and number.isdigit() and base in sent)
