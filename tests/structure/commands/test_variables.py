"""Assembly variables (``! name=value``): scope, conflicts, and arguments that name them."""

import pytest
from pydantic import Field

from langtree import RunStructure, TreeNode
from tests.structure.validated import diagnostics, line_in, mark_in, mark_of, problems

FILE = __file__


def settings_by_step(
    task: type[TreeNode], inputs: dict[object, object] | None = None
) -> dict[str, tuple[str | None, int]]:
    """Each planned step's model and resample count, by step id."""
    structure = RunStructure()
    structure.add(task)
    return {step.id: (step.model, step.resample) for step in structure.plan(inputs).steps}


# --- Scope ---------------------------------------------------------------------------


class Paragraph(TreeNode):
    """! resample(rounds)"""

    text: str


class Chapter(TreeNode):
    paragraph: Paragraph


class TaskBook(TreeNode):
    """! rounds=4"""

    chapter: Chapter


def test_variable_is_visible_in_every_node_below_its_definition() -> None:
    inputs: dict[object, object] = {TaskBook: {"chapter": {"paragraph": {}}}}

    assert settings_by_step(TaskBook, inputs) == {"task.book.chapter.paragraph:text": (None, 4)}


class TaskSameNode(TreeNode):
    """! rounds=3
    ! resample(rounds)"""

    text: str


def test_variable_is_visible_in_its_own_node() -> None:
    assert settings_by_step(TaskSameNode) == {"task.same_node:text": (None, 3)}


class FieldUser(TreeNode):
    text: str = Field(description="! resample(rounds)")


class TaskFieldScope(TreeNode):
    """! rounds=2"""

    user: FieldUser


def test_variable_is_visible_in_field_descriptions_below() -> None:
    inputs: dict[object, object] = {TaskFieldScope: {"user": {}}}

    assert settings_by_step(TaskFieldScope, inputs) == {"task.field_scope.user:text": (None, 2)}


class FastBranch(TreeNode):
    """! model_key="fast"
    ! llm(model_key)"""

    summary: str


class SlowBranch(TreeNode):
    """! model_key="slow"
    ! llm(model_key)"""

    summary: str


class TaskBranches(TreeNode):
    # Partial nodes by default: each branch's fields get steps with the branch's model.
    fast: FastBranch = Field(default_factory=FastBranch.model_construct)
    slow: SlowBranch = Field(default_factory=SlowBranch.model_construct)


def test_sibling_subtrees_may_define_the_same_name() -> None:
    assert diagnostics(TaskBranches) == ()


def test_each_sibling_resolves_its_own_definition() -> None:
    inputs: dict[object, object] = {TaskBranches: {"fast": {}, "slow": {}}}

    assert settings_by_step(TaskBranches, inputs) == {
        "task.branches.fast:summary": ("fast", 1),
        "task.branches.slow:summary": ("slow", 1),
    }


class TaskOtherRoot(TreeNode):
    """! model_key="other"
    ! llm(model_key)"""

    summary: str


def test_two_tasks_may_define_the_same_name() -> None:
    assert diagnostics(TaskBranches, TaskOtherRoot) == ()


# --- Redefinition --------------------------------------------------------------------


class TaskTwice(TreeNode):
    """! rounds=2
    ! rounds=3"""

    text: str


def test_redefinition_in_the_same_node_is_an_error() -> None:
    assert problems(TaskTwice) == [
        (
            "error",
            f"Assembly variable 'rounds' is already defined in TaskTwice "
            f"({FILE}:{line_in(TaskTwice, '! rounds=2')})",
            "variables cannot be reassigned; choose another name",
        )
    ]


def test_redefinition_points_at_the_second_definition() -> None:
    (diagnostic,) = diagnostics(TaskTwice)
    source_line = '    ! rounds=3"""'

    assert (diagnostic.class_name, diagnostic.field_name, diagnostic.file) == (
        "TaskTwice",
        None,
        FILE,
    )
    assert mark_of(diagnostic) == mark_in(TaskTwice, source_line, "! rounds=3")


class TaskTwiceInField(TreeNode):
    """! rounds=2"""

    text: str = Field(description="! rounds=5")


def test_redefinition_in_a_field_of_the_same_node_is_an_error() -> None:
    assert problems(TaskTwiceInField) == [
        (
            "error",
            f"Assembly variable 'rounds' is already defined in TaskTwiceInField "
            f"({FILE}:{line_in(TaskTwiceInField, '! rounds=2')})",
            "variables cannot be reassigned; choose another name",
        )
    ]


class Redefining(TreeNode):
    """! rounds=5"""

    text: str


class TaskRedefinedBelow(TreeNode):
    """! rounds=2"""

    child: Redefining


def test_redefinition_below_the_defining_node_is_an_error() -> None:
    assert problems(TaskRedefinedBelow) == [
        (
            "error",
            f"Assembly variable 'rounds' is already defined in TaskRedefinedBelow "
            f"({FILE}:{line_in(TaskRedefinedBelow, '! rounds=2')})",
            "variables cannot be reassigned; choose another name",
        )
    ]


def test_redefinition_below_points_at_the_lower_definition() -> None:
    (diagnostic,) = diagnostics(TaskRedefinedBelow)

    assert (diagnostic.class_name, diagnostic.line) == (
        "Redefining",
        line_in(Redefining, "! rounds=5"),
    )


# --- Names shared with fields ---------------------------------------------------------


class Holder(TreeNode):
    summary: str


class TaskNameOfChildField(TreeNode):
    """! summary='x'"""

    holder: Holder


class TaskNameOfOwnField(TreeNode):
    """! summary=1"""

    summary: str


class Grandchild(TreeNode):
    summary: str


class Middle(TreeNode):
    grandchild: Grandchild


class TaskNameOfDeepField(TreeNode):
    """! summary=true"""

    middle: Middle


@pytest.mark.parametrize(
    ("task", "field"),
    [
        pytest.param(TaskNameOfOwnField, "TaskNameOfOwnField.summary", id="own-field"),
        pytest.param(TaskNameOfChildField, "Holder.summary", id="child-field"),
        pytest.param(TaskNameOfDeepField, "Grandchild.summary", id="grandchild-field"),
    ],
)
def test_variable_named_like_a_field_of_the_subtree_is_an_error(
    task: type[TreeNode], field: str
) -> None:
    assert problems(task) == [
        (
            "error",
            f"Assembly variable 'summary' has the name of the field {field!r}",
            "rename the variable: variables and fields of a subtree share one namespace",
        )
    ]


class Defining(TreeNode):
    """! summary='x'"""

    text: str


class TaskFieldAbove(TreeNode):
    summary: str
    child: Defining


def test_variable_may_share_a_name_with_a_field_above_its_node() -> None:
    assert diagnostics(TaskFieldAbove) == ()


# --- Arguments that name variables -------------------------------------------------------


class ChoosesSmall(TreeNode):
    """! llm("small")"""

    summary: str


class TaskModelVariables(TreeNode):
    """! model_key="big"
    ! strong=true
    ! llm(model_key, override=strong)"""

    child: ChoosesSmall
    text: str


def test_llm_resolves_key_and_override_from_variables() -> None:
    inputs: dict[object, object] = {TaskModelVariables: {"child": {}}}

    assert settings_by_step(TaskModelVariables, inputs) == {
        "task.model_variables.child:summary": ("big", 1),
        "task.model_variables:text": ("big", 1),
    }


class TaskUnknown(TreeNode):
    """! resample(rounds)"""

    text: str


class UsesParentless(TreeNode):
    """! llm(model_key)"""

    text: str


class TaskDefinedInSibling(TreeNode):
    fast: FastBranch
    other: UsesParentless


class DefinesBelow(TreeNode):
    """! model_key='m'"""

    text: str


class TaskDefinedBelow(TreeNode):
    """! llm(model_key)"""

    child: DefinesBelow


class TaskUnknownInField(TreeNode):
    text: str = Field(description="! resample(rounds)")


@pytest.mark.parametrize(
    ("task", "name", "class_name"),
    [
        pytest.param(TaskUnknown, "rounds", "TaskUnknown", id="nowhere"),
        pytest.param(TaskDefinedInSibling, "model_key", "UsesParentless", id="in-sibling"),
        pytest.param(TaskDefinedBelow, "model_key", "TaskDefinedBelow", id="below"),
        pytest.param(TaskUnknownInField, "rounds", "TaskUnknownInField", id="in-field"),
    ],
)
def test_argument_naming_no_visible_variable_is_an_error(
    task: type[TreeNode], name: str, class_name: str
) -> None:
    assert problems(task) == [
        (
            "error",
            f"Unknown assembly variable {name!r}: neither {class_name!r} nor a node above it "
            "defines it",
            f"define it with '! {name}=...' in this node or one above it, or pass a literal",
        )
    ]


def test_unknown_variable_points_at_the_command_that_uses_it() -> None:
    (diagnostic,) = diagnostics(TaskUnknown)
    source_line = '    """! resample(rounds)"""'

    assert (diagnostic.line, diagnostic.column, diagnostic.source_line) == (
        line_in(TaskUnknown, "! resample(rounds)"),
        source_line.index("! resample(rounds)") + 1,
        source_line,
    )


class TaskStringCount(TreeNode):
    """! rounds="many"
    ! resample(rounds)"""

    text: str


class TaskFloatCount(TreeNode):
    """! rounds=2.5
    ! resample(rounds)"""

    text: str


class TaskZeroCount(TreeNode):
    """! rounds=0
    ! resample(rounds)"""

    text: str


class TaskNumberKey(TreeNode):
    """! model_key=4
    ! llm(model_key)"""

    text: str


class TaskNumberFlag(TreeNode):
    """! strong=1
    ! llm("big", override=strong)"""

    text: str


def where(cls: type[TreeNode], definition: str) -> str:
    return f"{cls.__name__} ({FILE}:{line_in(cls, definition)})"


@pytest.mark.parametrize(
    ("task", "message", "hint"),
    [
        pytest.param(
            TaskStringCount,
            "resample() argument 'n_times' must be an integer, got \"many\""
            " (the value of assembly variable 'rounds')",
            "pass an integer for 'n_times': change '! rounds=...' in "
            f"{where(TaskStringCount, '! rounds=')}, or pass a literal",
            id="resample-string",
        ),
        pytest.param(
            TaskFloatCount,
            "resample() argument 'n_times' must be an integer, got 2.5"
            " (the value of assembly variable 'rounds')",
            "pass an integer for 'n_times': change '! rounds=...' in "
            f"{where(TaskFloatCount, '! rounds=')}, or pass a literal",
            id="resample-float",
        ),
        pytest.param(
            TaskZeroCount,
            "resample() argument 'n_times' must be at least 1, got 0"
            " (the value of assembly variable 'rounds')",
            "pass a whole number of 1 or more: change '! rounds=...' in "
            f"{where(TaskZeroCount, '! rounds=')}, or pass a literal",
            id="resample-zero",
        ),
        pytest.param(
            TaskNumberKey,
            "llm() argument 'model_key' must be a string, got 4"
            " (the value of assembly variable 'model_key')",
            "pass a string for 'model_key': change '! model_key=...' in "
            f"{where(TaskNumberKey, '! model_key=')}, or pass a literal",
            id="llm-number-key",
        ),
        pytest.param(
            TaskNumberFlag,
            "llm() argument 'override' must be true or false, got 1"
            " (the value of assembly variable 'strong')",
            "pass true or false for 'override': change '! strong=...' in "
            f"{where(TaskNumberFlag, '! strong=')}, or pass a literal",
            id="llm-number-flag",
        ),
    ],
)
def test_variable_with_a_value_of_the_wrong_kind_is_an_error(
    task: type[TreeNode], message: str, hint: str
) -> None:
    assert problems(task) == [("error", message, hint)]


def test_wrong_kind_points_at_the_command_not_the_definition() -> None:
    (diagnostic,) = diagnostics(TaskZeroCount)

    assert (diagnostic.line, diagnostic.source_line) == (
        line_in(TaskZeroCount, "! resample(rounds)"),
        '    ! resample(rounds)"""',
    )
