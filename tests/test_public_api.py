"""The public surface: ``langtree.__all__`` is sorted, importable and documented."""

import inspect

import pytest

import langtree
import langtree.dsl
import langtree.runtime
import langtree.testing

PUBLIC_MODULES = [langtree, langtree.dsl, langtree.runtime, langtree.testing]

# TreeNode has no docstring on purpose: a node's docstring is its prompt text, and the
# base class must not lend one to subclasses that have none.
UNDOCUMENTED_BY_DESIGN = {"TreeNode"}


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda module: module.__name__)
def test_all_is_sorted_and_unique(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]

    assert names == sorted(set(names))


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda module: module.__name__)
def test_every_public_name_exists_and_is_documented(module: object) -> None:
    undocumented = [
        name
        for name in module.__all__  # type: ignore[attr-defined]
        if name not in UNDOCUMENTED_BY_DESIGN
        and (inspect.isclass(obj := getattr(module, name)) or inspect.isfunction(obj))
        and not obj.__doc__
    ]

    assert undocumented == []


def test_tree_node_lends_no_docstring() -> None:
    class Plain(langtree.TreeNode):
        value: int = 0

    assert Plain.__doc__ is None
    assert langtree.TreeNode.__doc__ is None


def test_parse_error_is_a_value_error_and_a_langtree_error() -> None:
    assert issubclass(langtree.CommandParseError, ValueError)
    assert issubclass(langtree.CommandParseError, langtree.LangTreeError)
    assert issubclass(langtree.StructureError, langtree.LangTreeError)
    assert issubclass(langtree.ExecutionError, langtree.LangTreeError)
