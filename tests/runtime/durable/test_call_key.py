"""A model's identity in a call's key: its class and parameters, the same in every run
(see ``langtree.runtime.durable._call_key``)."""

import pytest

from langtree.runtime.durable._call_key import model_identity
from langtree.testing import FakeChatModel


class Hook:
    """A parameter with no text of its own: Python writes it with its address."""


def on_reply() -> None:
    """A function as a parameter."""


@pytest.mark.parametrize(
    "bound",
    [
        pytest.param(lambda: {"hook": Hook()}, id="object"),
        pytest.param(lambda: {"hook": on_reply}, id="function"),
        pytest.param(lambda: {"hook": Hook}, id="class"),
    ],
)
def test_a_parameter_without_a_text_of_its_own_gives_the_same_identity_every_time(
    bound: object,
) -> None:
    def made() -> str:
        return model_identity(FakeChatModel().bind(**bound()))  # type: ignore[operator]

    assert made() == made()
    assert " at 0x" not in made()


def test_parameters_that_differ_give_identities_that_differ() -> None:
    def made(temperature: float) -> str:
        return model_identity(FakeChatModel().bind(temperature=temperature))

    assert made(0.1) != made(0.2)
