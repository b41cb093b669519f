"""The engine, under concurrency, sends exactly the prompts the reference scheduler sends.

`tests.dataflow.reference` runs a tree one step instance at a time in an order worked out
from what each part of the run reads and writes (D4), independently of the plan's
dependencies; `tests.dataflow.trees` draws trees that mix every command shape. For each
tree that validates, the engine's calls (each step instance's prompt, byte for byte) and
its result must equal the reference's, while its model answers in an order the test
chooses (each call first yields to the event loop a drawn number of times). The reference
checks itself too: with ready units taken in the opposite order it sends the same
prompts, so its own edges leave no two units whose order matters unordered.

`LANGTREE_REFERENCE_EXAMPLES` sets how many trees (default 100; `make test-reference`, which
`.ci/run` runs, draws 1,500, more than 1,000 of which validate);
`LANGTREE_REFERENCE_SEED` turns derandomization off and seeds Hypothesis:

```bash
LANGTREE_REFERENCE_EXAMPLES=2000 LANGTREE_REFERENCE_SEED=7 \\
    .venv/bin/python -m pytest tests/dataflow -x
```
"""

from __future__ import annotations

import os
import zlib
from collections import Counter
from collections.abc import Callable

from hypothesis import HealthCheck, event, given, note, seed, settings
from hypothesis import strategies as st

from langtree import ExecutionError, RunStructure, StructureError
from langtree.testing import FakeChatModel
from tests.dataflow.reference import (
    Call,
    ReferenceRun,
    canonical,
    engine_run,
    fake_provider,
    reference_run,
)
from tests.dataflow.trees import MODELS, Tree, load, trees

EXAMPLES = int(os.environ.get("LANGTREE_REFERENCE_EXAMPLES", "100"))
SEED = os.environ.get("LANGTREE_REFERENCE_SEED")


def _settings(test: Callable[..., None]) -> Callable[..., None]:
    configured = settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=SEED is None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )(test)
    return seed(int(SEED))(configured) if SEED is not None else configured


def structure_of(tree: Tree, order: int) -> tuple[RunStructure, FakeChatModel]:
    """The tree's tasks, with models whose calls finish in an order drawn by ``order``."""

    def yields(node_path: str) -> int:
        return zlib.crc32(f"{order}:{node_path}".encode()) % 6

    provider, fake = fake_provider(MODELS, yields)
    structure = RunStructure(tree.config, provider=provider)  # type: ignore[arg-type]
    module = load(tree)
    for task in tree.tasks:
        structure.add(getattr(module, task.name))
    return structure, fake


@_settings
@given(tree=trees(), order=st.integers(0, 2**16))
def test_the_engine_sends_what_the_reference_sends(tree: Tree, order: int) -> None:
    inputs = tree.inputs()
    note(tree.source())
    note(f"inputs = {inputs!r}\nconfig = {tree.config!r}")
    structure, fake = structure_of(tree, order)
    try:
        structure.validate(inputs)
    except StructureError as error:
        event(f"refused: {_first_error(error)}")
        return
    reference = _reference_or_error(structure, inputs)
    if isinstance(reference, ExecutionError):
        event("the reference stops with an ExecutionError")
        assert _engine_error(structure, inputs, fake) == str(reference)
        return
    backwards = reference_run(structure, inputs, reverse=True)
    assert Counter(backwards.calls) == Counter(reference.calls), "the reference's order matters"
    assert canonical(backwards.dumps) == canonical(reference.dumps)
    calls, dumps = engine_run(structure, inputs, fake)
    event("no call" if not reference.calls else f"{len(reference.calls) // 5 * 5 or 1}+ calls")
    assert Counter(calls) == Counter(reference.calls), _difference(reference.calls, calls)
    assert canonical(dumps) == canonical(reference.dumps)


def _reference_or_error(
    structure: RunStructure, inputs: dict[str, object]
) -> ReferenceRun | ExecutionError:
    try:
        return reference_run(structure, inputs)
    except ExecutionError as error:
        return error


def _engine_error(structure: RunStructure, inputs: dict[str, object], fake: FakeChatModel) -> str:
    """The text of the error the engine stops with (a run that ends is a failure)."""
    try:
        engine_run(structure, inputs, fake)
    except ExecutionError as error:
        return str(error)
    raise AssertionError("the engine ran where the reference stopped")


def _first_error(error: StructureError) -> str:
    """The first error's message, without the names that differ from tree to tree."""
    first = next((d for d in error.diagnostics if d.severity == "error"), None)
    return first.message.split("'")[0][:50] if first is not None else "?"


def _difference(reference: tuple[Call, ...], engine: tuple[Call, ...]) -> str:
    lines = ["the engine's calls differ from the reference's"]
    for call in Counter(reference) - Counter(engine):
        lines += [f"--- reference only: {call.node_path} {call.fields}", call.text]
    for call in Counter(engine) - Counter(reference):
        lines += [f"+++ engine only: {call.node_path} {call.fields}", call.text]
    return "\n".join(lines)
