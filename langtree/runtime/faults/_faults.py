"""Which failures of a model call are worth retrying, and how long the provider asked to wait.

`classify_failure` sorts an exception into one of three kinds, across providers:
`"transient"` (retry with backoff), `"invalid_output"` (the model answered, but the
answer is not usable: retry as invalid output) and `"permanent"` (fail at once). The
first rule that applies decides:

| # | the error | kind |
|---|---|---|
| 1 | `classifier(error)` returns a kind | that kind |
| 2 | LangTree's own (`LangTreeError`, e.g. `ExecutionError`) | permanent |
| 3 | an instance of one of `transient_errors` | transient |
| 4 | a LangChain `ModelError` whose `is_retryable` is true (429, 5xx, network) | transient |
| 4 | any other `ModelError` (auth, bad request, context overflow, …) | permanent |
| 5 | `OutputParserException`; a class named `LengthFinishReasonError` in its MRO | invalid_output |
| 5 | a class named `ContentFilterFinishReasonError` in its MRO | permanent |
| 6 | the builtin `TimeoutError` or `ConnectionError` (or a subclass) | transient |
| 7 | HTTP status 408, 409, 425, 429 or 500–599 (529 included) | transient |
| 7 | any other HTTP status 400–499 | permanent |
| 8 | a transport or timeout class of an HTTP or provider SDK in its MRO | transient |
| 9 | none of the above: rules 1–8 on `error.__cause__`, once | what they say |
| 10 | none of that either | permanent |

Rule 7 reads the status from `status_code` (openai, anthropic), `response.status_code`
(httpx, requests), `status` (aiohttp) or `code` (google), the first that holds an int
in 400–599. Rule 8 matches a class by its name (`_TRANSPORT_ERRORS`) *and* the top-level
package of its module (`_SDK_PACKAGES`, or any `langchain_*`), so that a user's own class
called `Timeout` is not mistaken for `requests.Timeout`; no SDK is imported. httpx's
`TransportError` is not matched as a whole: its `UnsupportedProtocol` and
`LocalProtocolError` are mistakes in the request, not trouble on the line.

Rule 2 covers a provider's refusal of the assets a call sent (HTTP 500 "image input is
not supported" from llama.cpp's server): the call wraps it in an `ExecutionError` first
(`langtree.runtime.calls._refusals`), so that it is not retried as a server error.

Rule 9 follows an explicit `raise ... from cause`, one level deep, as wrappers around a
provider's error use it; the implicit `__context__` (an error raised while handling
another) is never read, and neither is the cause of LangTree's own errors.

Examples:
    >>> classify_failure(TimeoutError())
    'transient'
    >>> classify_failure(KeyError("summary"))
    'permanent'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Literal, get_args

from langchain_core.exceptions import ModelError, OutputParserException

from langtree.errors import ExecutionError, LangTreeError

__all__ = [
    "ErrorClassifier",
    "FailureKind",
    "classify_failure",
    "describe_failure",
    "got_answer",
    "is_cut_off",
    "retry_after",
]

FailureKind = Literal["transient", "invalid_output", "permanent"]
"""How a failed model call is handled: retried with backoff, retried as invalid output,
or not retried."""


def got_answer(failure: str | None) -> bool:
    """Whether a call whose failure is ``failure`` (``None``: accepted) got an answer
    from the model: its output was accepted, or came back invalid or cut off. A call that
    failed otherwise got none (a connection refused, a timeout, an error the provider
    returned instead of one), so its prompt counts for no tokens."""
    return failure in (None, "invalid_output")


ErrorClassifier = Callable[[BaseException], FailureKind | None]
"""A user's rule: a kind for errors it recognises, None to leave the error to LangTree."""

_KINDS = frozenset(get_args(FailureKind))
# The 4xx statuses that say "not now" rather than "not this request": a timeout, a
# conflict with a concurrent request (the OpenAI and Anthropic SDKs retry 409 too),
# too early, too many requests. Every 5xx is transient (rule 7).
_TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
_SDK_PACKAGES = frozenset(
    {"aiohttp", "anthropic", "cohere", "google", "groq", "httpcore", "httpx", "httpx2"}
    | {"mistralai", "ollama", "openai", "requests", "urllib3"}
)
_TRANSPORT_ERRORS = frozenset(
    {"TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout"}
    | {"NetworkError", "ConnectError", "ReadError", "WriteError", "RemoteProtocolError"}
    | {"APIConnectionError", "APITimeoutError"}
    | {"ServiceUnavailable", "ResourceExhausted", "DeadlineExceeded", "TooManyRequests"}
    | {"InternalServerError", "ClientConnectionError", "ServerDisconnectedError"}
    | {"ConnectionError", "Timeout", "ChunkedEncodingError"}
    | {"TimeoutError", "ReadTimeoutError", "ConnectTimeoutError", "NewConnectionError"}
)
_LONGEST_MESSAGE = 300


def classify_failure(
    error: BaseException,
    *,
    transient_errors: Collection[type[BaseException]] = (),
    classifier: ErrorClassifier | None = None,
) -> FailureKind:
    """The kind of a model call's failure, by the rules in the module's docstring.

    Args:
        error: What the call raised.
        transient_errors: Further exception classes to retry with backoff.
        classifier: A user's rule, asked first (and asked again about the cause).

    Returns:
        `"transient"`, `"invalid_output"` or `"permanent"`.

    Raises:
        ExecutionError: `classifier` returned something other than a kind or None.
    """
    kind = _classify(error, transient_errors, classifier)
    cause = _cause(error)
    if kind is None and cause is not None:
        kind = _classify(cause, transient_errors, classifier)
    return kind or "permanent"


def retry_after(error: BaseException, *, now: float) -> float | None:
    """Seconds the provider asked to wait before retrying (Retry-After), if it said.

    Reads the headers of `error.response` (or `error.headers`), case-insensitively:
    `retry-after-ms` (milliseconds) wins over `retry-after` (seconds, or an HTTP date);
    then an attribute `retry_after` (seconds, a number or its text). A value that is not
    a finite number or a date (`soon`, `nan`, `inf`, a year past 9999) is skipped, a
    negative one (or a date in the past) is 0; a huge one (`1e308`, a date in 2099) is
    returned as it is, for `RetryPolicy.max_wait` to cap. When the error says nothing,
    its `__cause__` is read as in `classify_failure`. Never raises.

    Args:
        error: What the call raised.
        now: Seconds since the epoch (`RetryPolicy.clock`), to count down to a date.

    Examples:
        >>> class RateLimited(Exception):
        ...     headers = {"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}
        >>> retry_after(RateLimited(), now=1445412480.0)  # 07:28:00 that day
        30.0
    """
    seconds = _own_retry_after(error, now)
    cause = _cause(error)
    if seconds is None and cause is not None:
        seconds = _own_retry_after(cause, now)
    return seconds


def describe_failure(error: BaseException) -> str:
    """One line for the trace: the exception's class name, the HTTP status when known, and
    its message, e.g. "RateLimitError (HTTP 429): Rate limit reached for requests".

    Whitespace in the message is collapsed and a long message is cut at 300 characters,
    except LangTree's own, whose parts are cut already (a refusal holds the provider's
    description). Never raises (unless the exception's own `__str__` does).

    Examples:
        >>> describe_failure(TimeoutError())
        'TimeoutError: the call timed out'
    """
    status = _http_status(error)
    head = type(error).__name__ + (f" (HTTP {status})" if status is not None else "")
    message = " ".join(str(error).split())
    if not message and isinstance(error, TimeoutError):
        message = "the call timed out"
    if len(message) > _LONGEST_MESSAGE and not isinstance(error, LangTreeError):
        message = message[: _LONGEST_MESSAGE - 1] + "…"
    return f"{head}: {message}" if message else head


def _classify(
    error: BaseException,
    transient_errors: Collection[type[BaseException]],
    classifier: ErrorClassifier | None,
) -> FailureKind | None:
    """Rules 1–8 on the error itself; None when none of them applies."""
    if classifier is not None and (kind := _ask(classifier, error)) is not None:
        return kind
    # Before ``transient_errors``: LangTree's own errors (a refusal of the assets sent)
    # are decisions made already, which a broad class given there (``Exception``) must
    # not turn into retries.
    if isinstance(error, LangTreeError):
        return "permanent"
    if isinstance(error, tuple(transient_errors)):
        return "transient"
    return _known_kind(error)


def _ask(classifier: ErrorClassifier, error: BaseException) -> FailureKind | None:
    """The classifier's kind for the error, checked."""
    kind = classifier(error)
    if kind is not None and kind not in _KINDS:
        name = getattr(classifier, "__qualname__", repr(classifier))
        raise ExecutionError(
            f"The error classifier {name!r} returned {kind!r} for a "
            f"{type(error).__name__}\n  hint: return 'transient', 'invalid_output', "
            "'permanent', or None to leave the error to LangTree"
        )
    return kind


def _known_kind(error: BaseException) -> FailureKind | None:
    """Rules 4–8: what LangChain, the builtins, HTTP and the SDKs say of the error."""
    # A LangChain ``ModelError`` says itself whether it may be retried: its verdict
    # comes before any guess from a status or a class name.
    if isinstance(error, ModelError):
        return "transient" if error.is_retryable else "permanent"
    if isinstance(error, OutputParserException) or _named(error, "LengthFinishReasonError"):
        return "invalid_output"
    # The model answered, but its provider withheld the answer: the same messages
    # would meet the same filter.
    if _named(error, "ContentFilterFinishReasonError"):
        return "permanent"
    if isinstance(error, TimeoutError | ConnectionError):
        return "transient"
    status = _http_status(error)
    if status is not None:
        return "transient" if status in _TRANSIENT_STATUSES or status >= 500 else "permanent"
    if any(_is_transport_error(cls) for cls in type(error).__mro__):
        return "transient"
    return None


def is_cut_off(error: BaseException) -> bool:
    """Whether the error says the answer stopped at the model's output limit (openai's
    `LengthFinishReasonError`, matched by name).

    Examples:
        >>> is_cut_off(TimeoutError())
        False
    """
    return _named(error, "LengthFinishReasonError")


def _named(error: BaseException, name: str) -> bool:
    """Whether a class in the error's MRO is called `name`."""
    return any(cls.__name__ == name for cls in type(error).__mro__)


def _is_transport_error(cls: type) -> bool:
    """Whether the class is one of an HTTP or provider SDK's transport errors."""
    package = cls.__module__.partition(".")[0]
    from_sdk = package in _SDK_PACKAGES or package.startswith("langchain_")
    # Matched by name, so that no SDK is imported to test against its classes.
    return from_sdk and cls.__name__ in _TRANSPORT_ERRORS


def _http_status(error: BaseException) -> int | None:
    """The HTTP error status (400–599) the error carries, if any."""
    candidates = (
        getattr(error, "status_code", None),
        getattr(getattr(error, "response", None), "status_code", None),
        getattr(error, "status", None),
        getattr(error, "code", None),
    )
    for value in candidates:
        # Only 400–599: attributes of these names may hold other numbers (a provider's
        # own error number, a gRPC code), which say nothing of HTTP.
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
            return value
    return None


def _cause(error: BaseException) -> BaseException | None:
    """The exception `error` was raised from, unless `error` is LangTree's own."""
    return None if isinstance(error, LangTreeError) else error.__cause__


def _own_retry_after(error: BaseException, now: float) -> float | None:
    """The wait the error itself names: headers first, then its `retry_after`."""
    headers = _headers(error)
    milliseconds = _seconds(headers.get("retry-after-ms"))
    text = headers.get("retry-after", "")
    candidates = (
        # ``retry-after-ms`` first: where both headers are sent it is the finer; a date
        # is tried only when ``retry-after`` is no number.
        None if milliseconds is None else milliseconds / 1000,
        _seconds(text),
        _http_date(text, now),
        _seconds(getattr(error, "retry_after", None)),
    )
    return next((seconds for seconds in candidates if seconds is not None), None)


def _headers(error: BaseException) -> dict[str, str]:
    """The response headers on the error, names in lower case (empty when none)."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        headers = getattr(error, "headers", None)
    if not isinstance(headers, Mapping):
        return {}
    return {
        name.lower(): value
        for name, value in headers.items()
        if isinstance(name, str) and isinstance(value, str)
    }


def _http_date(text: str, now: float) -> float | None:
    """Seconds from ``now`` until an HTTP date (0 when it is past); a zoneless date is UTC."""
    try:
        moment = parsedate_to_datetime(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return max(0.0, moment.timestamp() - now)
    except (ValueError, OverflowError):
        return None


def _seconds(value: object) -> float | None:
    """A finite number (or its text) as seconds, negative ones as 0; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        seconds = float(value)
    except (ValueError, OverflowError):
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
