"""Every prompt a run would send, assembled offline (the dry run users test against).

Steps come in plan order; a step is shown once per node instance whose fields are not
all known yet (``[*]``: once for elements that only exist after earlier steps). Each
command is carried out as soon as no later step produces what it reads; values that only
a model can produce appear as ``[pending: produced by step ...]``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import KW_ONLY, dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage

from langtree._display import code, fenced
from langtree.errors import MissingVariablesError
from langtree.prompts._assembly import StepDocument, assemble
from langtree.prompts._asset_files import AssetFiles
from langtree.prompts._attachments import (
    AssetSource,
    AssetSources,
    asset_tokens,
    check_given_assets,
    content_blocks,
)
from langtree.prompts._dataflow import EXTERNAL
from langtree.prompts._given_inputs import check_given_inputs
from langtree.prompts._schedule import dry_run
from langtree.prompts._state import Address, RunState, instance_text
from langtree.prompts._template import StepTemplate
from langtree.prompts._tokens import PromptTokens
from langtree.prompts._values import check_unicode
from langtree.structure import (
    Analysis,
    Asset,
    ContextPath,
    EntryReaders,
    ExecutionPlan,
    KnownFields,
    NodeRegistry,
    PlanStep,
    PromptShape,
    TypeMappingConfig,
    entry_readers,
    known_fields,
    prompt_variable_names,
    prompted_fields,
    supplied_fields,
    title_from_name,
)

__all__ = [
    "PromptBuilder",
    "PromptSetup",
    "StepPrompt",
    "preview_prompts",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPrompt:
    """The messages one model call would receive.

    Attributes:
        step_id: The plan step (``<node tag>:<fields>``).
        node_path: The node instance, e.g. ``task.report.sections[0]`` (``[*]`` where
            the elements are not known before the run).
        fields: The fields the call generates.
        messages: The LangChain messages (system, then human). With assets, the human
            message's content is a list: a text block, then one content block per asset
            (see `langtree.prompts._attachments`).
        text: All messages' text, joined by a blank line (assets appear as their
            placeholders, ``[image 1: Front view]``).
        tokens: The tokens of ``text`` plus an estimate per asset (`ASSET_TOKENS`),
            counted when `token_count` or `encoding` is first read.
        model: The model key the step uses (``None``: the provider's default).
        variables: Runtime variables by internal name (``prompt__<path>__<name>``).
        token_budget: The most tokens the step's model may receive, when configured
            (``RunStructure({"token_budget": ...})``).
        assets: The assets sent with the human message, in the order of their numbers.
        samples: How many calls the prompt makes: its step's ``resample(n)`` (1: once).
        asset_fields: Where each of ``assets`` was given, e.g. ``'TaskDescribe.photo'``
            (see `AssetSources`).
        schema_tokens: The tokens of the step's output schema (compact JSON), which the
            model receives with every call besides the messages; `RunStructure.prompts()`
            sets them, counted when first read (``None``: not known, or an output that
            nests too deep for pydantic to build its schema, which the run refuses).
    """

    step_id: str
    node_path: str
    fields: tuple[str, ...]
    messages: tuple[BaseMessage, ...]
    text: str
    tokens: PromptTokens
    model: str | None
    variables: Mapping[str, object]
    token_budget: int | None = None
    assets: tuple[Asset, ...] = ()
    asset_fields: tuple[str, ...] = ()
    samples: int = 1
    schema_tokens: PromptTokens | None = None

    @property
    def token_count(self) -> int:
        """Tokens in ``text``, counted with `encoding`, plus an estimate per asset
        (`ASSET_TOKENS`); counted when first read."""
        return self.tokens.count

    @property
    def encoding(self) -> str:
        """The tiktoken encoding that counts the tokens (see `langtree.prompts._tokens`)."""
        return self.tokens.encoding

    @property
    def call_tokens(self) -> int:
        """The input tokens of one call: `token_count` and the output schema's."""
        schema = self.schema_tokens.count if self.schema_tokens is not None else 0
        return self.token_count + schema

    @property
    def over_budget(self) -> bool:
        """Whether the prompt needs more tokens than its budget allows."""
        return self.token_budget is not None and self.token_count > self.token_budget

    def __repr__(self) -> str:
        return (
            f"StepPrompt(step_id={self.step_id!r}, node_path={self.node_path!r}, "
            f"token_count={self.token_count})"
        )

    def _repr_markdown_(self) -> str:
        """The notebook display: the step and node instance, the model, the token count
        and the fields, then each message's text in a code block, exactly as sent."""
        head = f"**Prompt** of {code(self.step_id)} at {code(self.node_path)}"
        facts = [
            f"model {code(self.model)}" if self.model else "default model",
            self._tokens_text(),
            "fields " + ", ".join(code(name) for name in self.fields),
        ]
        if self.asset_fields:
            facts.append("assets " + ", ".join(code(label) for label in self.asset_fields))
        messages = (
            f"**{message.type}**\n\n{fenced(message.text, 'markdown')}" for message in self.messages
        )
        return "\n\n".join([head, " · ".join(facts), *messages])

    def _tokens_text(self) -> str:
        tokens = f"{self.token_count:,} tokens ({self.encoding})"
        if self.token_budget is None:
            return tokens
        if self.over_budget:
            return f"**{tokens}, over the budget of {self.token_budget:,}**"
        return f"{tokens} of a budget of {self.token_budget:,}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSetup:
    """A validated structure planned for the caller's inputs: what the prompts of its
    step instances are assembled from, in a dry run or a run.

    Attributes:
        registry: The nodes.
        analysis: The validated structure (its data flows).
        plan: The steps for these inputs.
        inputs: The caller's values by root task tag.
        variables: External prompt variables (``{name}`` in root texts).
        template: The message layout.
        config: How mapped values convert.
        shape: Which texts of the classes the prompts carry.
        model_names: For each model key, the model's name for token counting.
        asset_files: Where assets' local files may be read from, and how much of each.
    """

    registry: NodeRegistry
    analysis: Analysis
    plan: ExecutionPlan
    inputs: Mapping[str, object]
    variables: Mapping[str, object]
    template: StepTemplate
    config: TypeMappingConfig
    model_names: Mapping[str | None, str | None]
    shape: PromptShape
    asset_files: AssetFiles = field(default_factory=AssetFiles)

    def known(self) -> KnownFields:
        """The known fields by node tag (DESIGN D2): given, defaulted or mapped."""
        supplied = supplied_fields(self.registry, self.inputs)
        return known_fields(self.registry, list(self.analysis.flows), supplied)

    def split(self) -> dict[str, dict[str, str]]:
        """The fields that split steps generate, with the id of the step, by node tag:
        inside a node that another step generates whole, that step leaves them to their
        own (`PlanStep.creator`)."""
        split: dict[str, dict[str, str]] = {}
        for step in self.plan.steps:
            if step.creator is not None:
                split.setdefault(step.node_tag, {}).update(dict.fromkeys(step.fields, step.id))
        return split

    def builder(self, state: RunState) -> PromptBuilder:
        """Builds the prompts from ``state``, as its values become known."""
        flows = list(self.analysis.flows)
        return PromptBuilder(
            state,
            self.variables,
            self.template,
            self.model_names,
            prompt_names=prompt_variable_names(flows),
            known=self.known(),
            split=self.split(),
            contexts={
                tag: setting.context
                for tag, setting in self.analysis.settings.items()
                if setting.context is not None
            },
            readers=entry_readers(self.registry, flows, prompted_fields(self.plan.steps)),
            shape=self.shape,
            asset_files=self.asset_files,
        )


def preview_prompts(setup: PromptSetup) -> list[StepPrompt]:
    """Assemble the prompt of every step instance of the plan.

    Raises:
        ExecutionError: External variables or required assets are missing, a command's
            data does not fit, or an input or variable holds a lone surrogate (text no
            prompt can carry).
        StructureError: The template fails to render.
    """
    state = RunState.start(setup.registry, setup.inputs, split=setup.split())
    builder = setup.builder(state)
    walk = dry_run(setup.registry, setup.analysis.flows, setup.plan.steps, state, setup.config)
    prompts = [builder.build(step, address) for step, address in walk]
    builder.check_missing()
    check_given_assets(setup.registry, state)
    check_given_inputs(setup.registry, state)
    return prompts


# -- one prompt -------------------------------------------------------------------------


@dataclass(eq=False)
class PromptBuilder:
    """Assembles and renders the prompt of one step instance.

    Attributes:
        keep_time: Called before each chunk of an asset's file is read; a run sets it
            to stop the read at the run's deadline (``None``: no deadline).

    Raises:
        ExecutionError: An external variable holds a lone surrogate, which no prompt
            can carry (see `check_unicode()`).
    """

    state: RunState
    variables: Mapping[str, object]
    template: StepTemplate
    model_names: Mapping[str | None, str | None]
    _: KW_ONLY
    prompt_names: Mapping[str, set[str]]
    known: Mapping[str, set[str]]
    split: Mapping[str, Collection[str]] = field(default_factory=dict)
    contexts: Mapping[str, tuple[ContextPath, ...]] = field(default_factory=dict)
    readers: EntryReaders = field(default_factory=EntryReaders)
    shape: PromptShape
    asset_files: AssetFiles = field(default_factory=AssetFiles)
    keep_time: Callable[[], None] | None = field(default=None, init=False)
    missing: dict[str, set[str]] = field(default_factory=dict, init=False)
    _left_out: dict[str, set[str]] = field(init=False)
    """What a step that generates a node whole does not ask for: its known fields, and
    those its split steps generate."""
    _sources: AssetSources | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for name, value in self.variables.items():
            check_unicode(value, name, subject="The external variable")
        self._left_out = {
            tag: set(self.known.get(tag, ())) | set(self.split.get(tag, ()))
            for tag in set(self.known) | set(self.split)
        }

    def document(self, step: PlanStep, address: Address) -> StepDocument:
        """The assembled Markdown of one step instance, before the template renders it."""
        return assemble(
            self.state.registry,
            self.state,
            address,
            step.fields,
            _external_values(self.state) | dict(self.variables),
            prompt_names=self.prompt_names,
            known=self._left_out,
            contexts=self.contexts,
            readers=self.readers,
            shape=self.shape,
            unseen=step.unseen,
        )

    def asset_source(self, asset: Asset) -> AssetSource:
        """Where ``asset`` was given (the sources are found once, when first asked)."""
        if self._sources is None:
            self._sources = AssetSources(self.state.registry, self.state, self.variables)
        return self._sources.of(asset)

    def read_file(self, asset: Asset) -> bytes:
        """The bytes of an asset given by its path.

        Raises:
            ExecutionError: The file is refused or cannot be read (see `AssetFiles`).
        """
        assert asset.path is not None, "only an asset given by its path is read"
        where = self.asset_source(asset).label
        return self.asset_files.read(asset.path, where, self.keep_time)

    def build(self, step: PlanStep, address: Address) -> StepPrompt:
        registry = self.state.registry
        document = self.document(step, address)
        root = registry.path(step.node_tag)[0].tag
        for name in document.missing:
            self.missing.setdefault(name, set()).add(root)
        node_path = instance_text(registry, address)
        messages = self.template.render(
            {
                "document": document.text,
                "instructions": document.instructions,
                "context": document.context_section,
                "fields": [title_from_name(name) for name in step.fields],
                "field_names": list(step.fields),
                "node_path": node_path,
                "step_id": step.id,
            }
        )
        if document.assets:
            messages = _with_blocks(messages, document.assets, self.read_file)
        text = "\n\n".join(message.text for message in messages)
        model_name = self.model_names.get(step.model, step.model)
        return StepPrompt(
            step_id=step.id,
            node_path=node_path,
            fields=step.fields,
            messages=messages,
            text=text,
            tokens=PromptTokens(text, model_name, extra=asset_tokens(document.assets)),
            model=step.model,
            variables=document.variables,
            assets=document.assets,
            asset_fields=tuple(self.asset_source(asset).label for asset in document.assets),
            samples=step.resample,
        )

    def check_missing(self) -> None:
        """Raise when the root tasks' texts use external variables nobody supplied.

        Raises:
            MissingVariablesError: Naming every missing variable and the tasks that use it.
        """
        if self.missing:
            tasks = sorted({tag for tags in self.missing.values() for tag in tags})
            raise MissingVariablesError(sorted(self.missing), tasks)


def _with_blocks(
    messages: tuple[BaseMessage, ...],
    assets: tuple[Asset, ...],
    read_file: Callable[[Asset], bytes],
) -> tuple[BaseMessage, ...]:
    """The messages with the assets' content blocks after the last human message's text."""
    at = max(i for i, message in enumerate(messages) if isinstance(message, HumanMessage))
    human = messages[at]
    content = [{"type": "text", "text": human.text}, *content_blocks(assets, read_file)]
    updated = human.model_copy(update={"content": content})
    return (*messages[:at], updated, *messages[at + 1 :])


def _external_values(state: RunState) -> dict[str, object]:
    return {
        name: values[0] if len(values) == 1 else values
        for name, values in state.prompt_values_of(EXTERNAL).items()
    }
