"""What a run checks before its first model call, with as little prompt assembly as can be.

The dry run's schedule is replayed on a copy of the inputs: every command is carried out
where the dry run carries it out (mapped values that do not fit fail here), and each step
instance that the dry run would show is marked as pending. Along the way:

- **External variables.** Instead of rendering a prompt, only the texts that a prompt
  shows at the root task's level are scanned for ``{name}``: the root's docstring, the
  descriptions of the root fields the step generates, and the description of the root
  field that leads down to the step's node. A name there that is neither sent by a
  ``prompt`` mapping, nor a field of the root, nor an external value (``variables``, or an
  ``@all->prompt.external`` command carried out by then) is a missing external variable —
  exactly the names the assembly of those prompts would report (see
  `langtree.prompts._assembly`).
- **Assets a model cannot read.** When the tree holds assets and a step's model has a
  LangChain profile that says it lacks a kind of input (``image_inputs=False``, ...),
  the document of each of that step's instances is assembled (its Markdown only: no
  template, no token count, no file read), and each asset in it of a kind the model
  lacks is an error that names the field it was given in. The steps of every other
  model assemble nothing here.
- **Required assets.** Once the walk is done, every known node instance has a value for
  each required asset field (`check_given_assets()`).
- **Assets' files.** Every local file that an asset of the inputs, the variables or a
  command carried out names is opened, and its folder, type and size checked, none
  read (`check_asset_files()`): a path the run may not read stops it here, not at the
  step that would send it.

``RunStructure.validate()`` runs the second check alone (`check_asset_support()`),
with the models the provider holds already built: a model given as a factory is built,
and checked, when a run starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import Runnable

from langtree.errors import Diagnostic, StructureError
from langtree.prompts import (
    EXTERNAL,
    Address,
    AssetCollector,
    AssetSource,
    AssetSources,
    PromptBuilder,
    PromptSetup,
    RunState,
    check_asset_files,
    check_given_assets,
    check_given_inputs,
    dry_run,
    lacked_input,
    lacked_inputs,
)
from langtree.runtime.calls._methods import primary_chat_model
from langtree.runtime.calls._provider import LLMProvider
from langtree.structure import (
    TEMPLATE_VARIABLES,
    NodeRegistry,
    PlanStep,
    asset_field_names,
    find_placeholders,
    prompt_variable_names,
)

__all__ = ["check_asset_support", "check_before_calls", "model_profile"]

_NOUNS: Mapping[str, tuple[str, str]] = {
    "image_inputs": ("an image", "images"),
    "video_inputs": ("a video", "videos"),
    "audio_inputs": ("audio", "audio"),
    "pdf_inputs": ("a PDF", "PDFs"),
}
"""How a message names what a profile key is about: one, and several."""
_LISTED_STEPS = 3


def model_profile(model: Runnable[Any, Any]) -> Mapping[str, object] | None:
    """The model's profile (what it takes and produces), when the chat model has one."""
    chat_model = primary_chat_model(model)
    profile = chat_model.profile if chat_model is not None else None
    return dict(profile) if profile else None


def check_before_calls(setup: PromptSetup, builder: PromptBuilder, provider: LLMProvider) -> None:
    """Everything a run checks before its first model call, in one dry run.

    Args:
        setup: The planned run.
        builder: The run's prompt builder: it reports the missing external variables.
        provider: The models; those of the steps that may send assets are built here.

    Raises:
        ExecutionError: External variables or required assets are missing, an asset's
            file may not be read, or a command's data does not fit (see `apply_flow()`).
        StructureError: A step would send a model an asset of a kind its profile says it
            lacks, or a step's model key is not in the provider.
    """
    # A state of its own, not the run's: the replay writes the commands' values and marks
    # fields pending, and the run starts again from the inputs.
    state = RunState.start(setup.registry, setup.inputs)
    variables = _VariableScan(setup, state)
    support = _AssetSupport.start(setup, state, lambda key: model_profile(provider.get(key)))
    default = provider.default
    for step, address in dry_run(
        setup.registry, setup.analysis.flows, setup.plan.steps, state, setup.config
    ):
        variables.scan(step)
        if support is not None:
            support.check(step, address, step.model or default)
    # Reported by the run's builder, in the words the assembly of a prompt would use.
    builder.missing = variables.missing
    builder.check_missing()
    check_given_assets(setup.registry, state)
    check_given_inputs(setup.registry, state)
    check_asset_files(AssetSources(setup.registry, state, setup.variables), setup.asset_files)
    if support is not None:
        support.raise_refused()


def check_asset_support(
    registry: NodeRegistry, provider: LLMProvider, setup: Callable[[], PromptSetup]
) -> None:
    """Refuse the assets that a step would send a model whose profile says it lacks
    their kind, with the models the provider holds already built (``validate()``).

    Args:
        registry: The nodes: a tree that holds no asset needs no check.
        provider: The models; a model given as a factory is not built, nor checked.
        setup: The planned run, made only when the tree holds assets and a model of the
            provider lacks a kind.

    Raises:
        ExecutionError: A command's data does not fit.
        StructureError: Naming each asset field, the kind and the model.
    """

    # Only a model given built is looked at: a factory or a provider string would have to
    # be built (and may need an API key) just to be checked.
    def profile(key: str) -> Mapping[str, object] | None:
        source = provider.config(key).model
        return model_profile(source) if isinstance(source, Runnable) else None

    # Planning the run is the costly part: it is done only when some model may refuse.
    if not _holds_assets(registry, {}) or not any(
        lacked_inputs(profile(key)) for key in provider.list_models()
    ):
        return
    planned = setup()
    state = RunState.start(planned.registry, planned.inputs)
    support = _AssetSupport.start(planned, state, profile)
    assert support is not None, "the tree holds assets"
    for step, address in dry_run(
        planned.registry, planned.analysis.flows, planned.plan.steps, state, planned.config
    ):
        support.check(step, address, step.model or provider.default)
    support.raise_refused()


# -- external variables ---------------------------------------------------------------------


class _VariableScan:
    """The external variables the run's prompts would use and nothing supplies: each
    missing name, with the root task tags whose texts use it."""

    def __init__(self, setup: PromptSetup, state: RunState) -> None:
        self.registry = setup.registry
        self.variables = setup.variables
        self.state = state
        self.prompt_names = prompt_variable_names(list(setup.analysis.flows))
        self.scanned: set[str] = set()
        self.missing: dict[str, set[str]] = {}

    def scan(self, step: PlanStep) -> None:
        """Scan the root texts of ``step``'s prompts (once per step)."""
        # The texts scanned are the step's, the same for each of its instances.
        if step.id in self.scanned:
            return
        self.scanned.add(step.id)
        root = self.registry.path(step.node_tag)[0]
        sent = self.prompt_names.get(root.tag, set())
        # Read when the dry run reaches the step: an ``@all->prompt.external`` command carried
        # out only later supplies nothing to the prompts of the steps before it.
        supplied = (
            sent
            | {node_field.name for node_field in root.fields}
            | set(self.variables)
            | {name for (address, name) in self.state.prompt_values if address == EXTERNAL}
        )
        for text in _root_texts(self.registry, step):
            for placeholder in find_placeholders(text):
                name = placeholder.name
                if name not in TEMPLATE_VARIABLES and not _supplied(name, supplied, sent):
                    self.missing.setdefault(name, set()).add(root.tag)


def _root_texts(registry: NodeRegistry, step: PlanStep) -> list[str]:
    """The texts a prompt of ``step`` shows at its root task's level."""
    path = registry.path(step.node_tag)
    root = path[0]
    texts = [root.text]
    # A step of the root shows the descriptions of the fields it generates; a step below
    # shows, at the root's level, only the field that leads down to its node.
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


# -- assets a model cannot read --------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class _Refusal:
    """An asset field (or variable) whose assets of one kind a model cannot read."""

    source: AssetSource
    model: str
    key: str
    steps: list[str] = field(default_factory=list)


class _AssetSupport:
    """Which step instances would send a model assets of a kind its profile lacks."""

    def __init__(
        self,
        builder: PromptBuilder,
        profile: Callable[[str], Mapping[str, object] | None],
    ) -> None:
        self.builder = builder
        self.profile = profile
        self.profiles: dict[str, Mapping[str, object] | None] = {}
        self.refusals: dict[tuple[str, str, str], _Refusal] = {}

    @classmethod
    def start(
        cls,
        setup: PromptSetup,
        state: RunState,
        profile: Callable[[str], Mapping[str, object] | None],
    ) -> _AssetSupport | None:
        """The check over ``state``, or ``None`` when no prompt of the run can show an
        asset (no node has an asset field and no external variable holds one)."""
        if not _holds_assets(setup.registry, setup.variables):
            return None
        return cls(setup.builder(state), profile)

    def check(self, step: PlanStep, address: Address, model: str) -> None:
        """Note each asset of the instance's prompt that ``model`` cannot read."""
        # Each model's profile is looked up once: getting it may build the model.
        if model not in self.profiles:
            self.profiles[model] = self.profile(model)
        profile = self.profiles[model]
        if not lacked_inputs(profile):
            return
        for asset in self.builder.document(step, address).assets:
            key = lacked_input(asset, profile)
            if key is None:
                continue
            source = self.builder.asset_source(asset)
            # One refusal per asset field, model and kind, listing every step that would send
            # it, so that the error names each field once however many instances it has.
            refusal = self.refusals.setdefault(
                (source.label, model, key), _Refusal(source=source, model=model, key=key)
            )
            if step.id not in refusal.steps:
                refusal.steps.append(step.id)

    def raise_refused(self) -> None:
        """Raise one error for every asset field a model cannot read.

        Raises:
            StructureError: Holding a diagnostic per asset field, kind and model.
        """
        if self.refusals:
            diagnostics = [_refused(refusal) for refusal in self.refusals.values()]
            raise StructureError(sorted(diagnostics, key=lambda d: d.sort_key))


def _holds_assets(registry: NodeRegistry, variables: Mapping[str, object]) -> bool:
    """Whether a prompt of the run may show an asset (a value of a field typed ``Any``
    may hold one too: the step's call refuses it, see ``StepCall``)."""
    if any(asset_field_names(node.node_class) for node in registry):
        return True
    collector = AssetCollector()
    collector.swap(list(variables.values()))
    return bool(collector.assets)


def _refused(refusal: _Refusal) -> Diagnostic:
    one, several = _NOUNS[refusal.key]
    steps = refusal.steps
    listed = ", ".join(repr(step) for step in steps[:_LISTED_STEPS])
    if len(steps) > _LISTED_STEPS:
        listed += f" and {len(steps) - _LISTED_STEPS} more"
    which = f"step {listed}" if len(steps) == 1 else f"steps {listed}"
    node, model, key = refusal.source.node, refusal.model, refusal.key
    return Diagnostic(
        severity="error",
        message=f"{refusal.source.label!r} holds {one}, which model {model!r} cannot read "
        f"(its profile has {key}=False): {which} would send it",
        hint=f"give the step{'s' if len(steps) > 1 else ''} a model that reads {several} "
        f'with ! llm("<key>") on the node or field; if {model!r} does read them, correct '
        f"its profile where the chat model is made (profile={{..., {key!r}: True}})",
        class_name=node.origin.class_name if node is not None else None,
        field_name=refusal.source.field_name,
        file=node.origin.file if node is not None else None,
        line=node.origin.line if node is not None else None,
    )
