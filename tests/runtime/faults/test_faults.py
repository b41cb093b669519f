"""Failures of model calls: which kind each is, how long to wait, and how to describe it.

Real exception classes are used where their SDK is installed (openai, langchain-openai,
httpx, requests, urllib3); anthropic, google and aiohttp are stood in for by classes whose
``__module__`` is the SDK's, with the same names and attributes.
"""

import asyncio
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from types import SimpleNamespace
from typing import get_args

import pytest
from langchain_core.exceptions import (
    ContextOverflowError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelInvalidRequestError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelRateLimitError,
    ModelTimeoutError,
    OutputParserException,
)

from langtree.errors import CommandParseError, ConversionError, ExecutionError
from langtree.runtime.faults import _faults as faults
from langtree.runtime.faults._faults import (
    FailureKind,
    classify_failure,
    describe_failure,
    retry_after,
)

URL = "http://127.0.0.1/v1/chat/completions"

ErrorFactory = Callable[[], BaseException]


def stand_in(module: str, name: str, *bases: type, **attributes: object) -> type[Exception]:
    """A class called ``name`` that claims to live in ``module``."""
    return type(name, bases or (Exception,), {"__module__": module, **attributes})


def failure(message: str = "failed", **attributes: object) -> Exception:
    """A user's exception carrying the given attributes."""
    error = Exception(message)
    for name, value in attributes.items():
        setattr(error, name, value)
    return error


def caused(error: BaseException, cause: BaseException | None) -> BaseException:
    """``error`` as if raised ``from cause``."""
    error.__cause__ = cause
    return error


def openai_error(name: str, status: int, message: str = "failed", **headers: str) -> Exception:
    """An openai status error, built as the SDK builds it (on httpx2 since openai 3)."""
    openai = pytest.importorskip("openai")
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", URL)
    response = httpx2.Response(status, request=request, headers=headers)
    error: Exception = getattr(openai, name)(message, response=response, body=None)
    return error


def openai_request_error(name: str) -> Exception:
    """``openai.APITimeoutError`` or ``openai.APIConnectionError``."""
    openai = pytest.importorskip("openai")
    request = pytest.importorskip("httpx2").Request("POST", URL)
    error: Exception = getattr(openai, name)(request=request)
    return error


def openai_length_error() -> Exception:
    openai = pytest.importorskip("openai")
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion(id="c", choices=[], created=0, model="m", object="chat.completion")
    error: Exception = openai.LengthFinishReasonError(completion=completion)
    return error


def openai_content_filter_error() -> Exception:
    error: Exception = pytest.importorskip("openai").ContentFilterFinishReasonError()
    return error


def httpx_error(name: str) -> Exception:
    httpx = pytest.importorskip("httpx")
    error: Exception = getattr(httpx, name)("failed", request=httpx.Request("POST", URL))
    return error


def httpx_status_error(status: int, message: str = "failed", **headers: str) -> Exception:
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("POST", URL)
    response = httpx.Response(status, request=request, headers=headers)
    error: Exception = httpx.HTTPStatusError(message, request=request, response=response)
    return error


def requests_error(name: str) -> Exception:
    exceptions = pytest.importorskip("requests.exceptions")
    error: Exception = getattr(exceptions, name)("failed")
    return error


def requests_status_error(status: int, **headers: str) -> Exception:
    requests = pytest.importorskip("requests")
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers)
    error: Exception = requests.HTTPError("failed", response=response)
    return error


def urllib3_error(name: str) -> Exception:
    exceptions = pytest.importorskip("urllib3.exceptions")
    error: Exception = getattr(exceptions, name)(None, URL, "Read timed out.")
    return error


def langchain_openai_error(name: str) -> Exception:
    pytest.importorskip("langchain_openai")
    from langchain_openai.chat_models import base

    openai = pytest.importorskip("openai")
    cls = getattr(base, name)
    if issubclass(cls, openai.APITimeoutError):
        error: Exception = cls(pytest.importorskip("httpx2").Request("POST", URL))
    elif issubclass(cls, openai.APIConnectionError):
        error = cls(request=pytest.importorskip("httpx2").Request("POST", URL))
    else:
        template = openai_error("APIStatusError", 400)
        error = cls("failed", response=template.response, body=None)  # type: ignore[attr-defined]
    return error


ANTHROPIC_CONNECTION = stand_in("anthropic._exceptions", "APIConnectionError")
ANTHROPIC_TIMEOUT = stand_in("anthropic._exceptions", "APITimeoutError", ANTHROPIC_CONNECTION)
AIOHTTP_CONNECTION = stand_in("aiohttp.client_exceptions", "ClientConnectionError")
AIOHTTP_DISCONNECTED = stand_in(
    "aiohttp.client_exceptions", "ServerDisconnectedError", AIOHTTP_CONNECTION
)
GOOGLE_MODULE = "google.api_core.exceptions"


# --- The public surface -------------------------------------------------------------------


def test_all_names_the_public_surface() -> None:
    assert faults.__all__ == [
        "ErrorClassifier",
        "FailureKind",
        "classify_failure",
        "describe_failure",
        "got_answer",
        "is_cut_off",
        "retry_after",
    ]


def test_failure_kind_names_the_three_kinds() -> None:
    assert get_args(FailureKind) == ("transient", "invalid_output", "permanent")


# --- Rule 1: the user's classifier --------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(ValueError("bad"), "transient", id="unknown-made-transient"),
        pytest.param(TimeoutError(), "permanent", id="timeout-made-permanent"),
        pytest.param(OutputParserException("bad"), "transient", id="parser-made-transient"),
        pytest.param(ExecutionError("bad"), "transient", id="langtree-error-made-transient"),
        pytest.param(KeyError("x"), "invalid_output", id="unknown-made-invalid-output"),
    ],
)
def test_the_classifier_kind_wins(error: BaseException, kind: FailureKind) -> None:
    assert classify_failure(error, classifier=lambda _: kind) == kind


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(TimeoutError(), "transient", id="timeout"),
        pytest.param(OutputParserException("bad"), "invalid_output", id="parser"),
        pytest.param(ValueError("bad"), "permanent", id="unknown"),
    ],
)
def test_a_classifier_returning_none_leaves_the_error_to_the_rules(
    error: BaseException, kind: FailureKind
) -> None:
    assert classify_failure(error, classifier=lambda _: None) == kind


def test_the_classifier_is_asked_about_the_cause() -> None:
    class QuotaError(Exception):
        pass

    def classifier(error: BaseException) -> FailureKind | None:
        return "transient" if isinstance(error, QuotaError) else None

    error = caused(RuntimeError("call failed"), QuotaError("quota"))

    assert classify_failure(error, classifier=classifier) == "transient"


def test_a_classifier_returning_a_non_kind_raises() -> None:
    def retry_everything(error: BaseException) -> FailureKind | None:
        return "retry"  # type: ignore[return-value]

    with pytest.raises(ExecutionError) as caught:
        classify_failure(ValueError("bad"), classifier=retry_everything)

    assert str(caught.value) == (
        "The error classifier "
        "'test_a_classifier_returning_a_non_kind_raises.<locals>.retry_everything' "
        "returned 'retry' for a ValueError\n"
        "  hint: return 'transient', 'invalid_output', 'permanent', "
        "or None to leave the error to LangTree"
    )


# --- Rule 2: LangTree's own errors --------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ExecutionError("the run failed"), id="execution"),
        pytest.param(ConversionError("not an int"), id="conversion"),
        pytest.param(
            CommandParseError("bad", line=1, column=1, source_line="!", hint="fix"),
            id="command-parse",
        ),
    ],
)
def test_langtree_errors_are_permanent(error: BaseException) -> None:
    assert classify_failure(error) == "permanent"


def test_transient_errors_do_not_make_langtree_errors_transient() -> None:
    error = ExecutionError("the run failed")

    assert classify_failure(error, transient_errors=(RuntimeError,)) == "permanent"


def test_the_cause_of_a_langtree_error_is_not_read() -> None:
    error = caused(ExecutionError("the run failed"), TimeoutError())

    assert classify_failure(error) == "permanent"


# --- Rule 3: transient_errors -------------------------------------------------------------


class FlakyError(Exception):
    pass


class FlakierError(FlakyError):
    pass


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(FlakyError(), "transient", id="listed"),
        pytest.param(FlakierError(), "transient", id="subclass-of-listed"),
        pytest.param(ValueError(), "permanent", id="not-listed"),
    ],
)
def test_transient_errors_are_transient(error: BaseException, kind: FailureKind) -> None:
    assert classify_failure(error, transient_errors=(FlakyError,)) == kind


# --- Rule 4: LangChain's ModelError -------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "kind"),
    [
        pytest.param(ModelRateLimitError, "transient", id="rate-limit"),
        pytest.param(ModelAPIError, "transient", id="api"),
        pytest.param(ModelConnectionError, "transient", id="connection"),
        pytest.param(ModelTimeoutError, "transient", id="timeout"),
        pytest.param(ModelError, "permanent", id="base"),
        pytest.param(ModelAuthenticationError, "permanent", id="authentication"),
        pytest.param(ModelPermissionDeniedError, "permanent", id="permission"),
        pytest.param(ModelInvalidRequestError, "permanent", id="invalid-request"),
        pytest.param(ModelNotFoundError, "permanent", id="not-found"),
        pytest.param(ContextOverflowError, "permanent", id="context-overflow"),
    ],
)
def test_model_errors_follow_is_retryable(cls: type[ModelError], kind: FailureKind) -> None:
    assert classify_failure(cls("failed")) == kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param("OpenAIRateLimitError", "transient", id="rate-limit"),
        pytest.param("OpenAIAPIError", "transient", id="api"),
        pytest.param("OpenAIConnectionError", "transient", id="connection"),
        pytest.param("OpenAITimeoutError", "transient", id="timeout"),
        pytest.param("OpenAIAuthenticationError", "permanent", id="authentication"),
        pytest.param("OpenAIPermissionDeniedError", "permanent", id="permission"),
        pytest.param("OpenAIInvalidRequestError", "permanent", id="invalid-request"),
        pytest.param("OpenAIModelNotFoundError", "permanent", id="not-found"),
        pytest.param("OpenAIContextOverflowError", "permanent", id="context-overflow"),
    ],
)
def test_langchain_openai_errors_follow_is_retryable(name: str, kind: FailureKind) -> None:
    assert classify_failure(langchain_openai_error(name)) == kind


def test_a_model_error_that_is_not_retryable_beats_a_transient_status() -> None:
    class GatewayOverflowError(ContextOverflowError):
        status_code = 503

    assert classify_failure(GatewayOverflowError("too long")) == "permanent"


def test_is_retryable_is_read_from_the_instance() -> None:
    error = ModelError("failed")
    error.is_retryable = True

    assert classify_failure(error) == "transient"


# --- Rule 5: unusable output --------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda: OutputParserException("bad json"), "invalid_output", id="parser"),
        pytest.param(openai_length_error, "invalid_output", id="openai-length"),
        pytest.param(
            lambda: stand_in("cerebras.cloud.sdk", "LengthFinishReasonError")(),
            "invalid_output",
            id="length-by-name-in-any-module",
        ),
        pytest.param(
            lambda: type("Truncated", (stand_in("x", "LengthFinishReasonError"),), {})(),
            "invalid_output",
            id="length-subclass",
        ),
        pytest.param(openai_content_filter_error, "permanent", id="openai-content-filter"),
    ],
)
def test_unusable_output(make: ErrorFactory, kind: FailureKind) -> None:
    assert classify_failure(make()) == kind


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda: OutputParserException("bad"), "invalid_output", id="parser"),
        pytest.param(openai_content_filter_error, "permanent", id="content-filter"),
    ],
)
def test_unusable_output_is_judged_before_its_cause(make: ErrorFactory, kind: FailureKind) -> None:
    assert classify_failure(caused(make(), TimeoutError())) == kind


# --- Rule 6: builtin timeouts and connection errors ---------------------------------------


class StalledError(TimeoutError):
    pass


def stream_chunk_timeout() -> Exception:
    pytest.importorskip("langchain_openai")
    from langchain_openai.chat_models._client_utils import StreamChunkTimeoutError

    return StreamChunkTimeoutError(120.0, model_name="gpt-test")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(TimeoutError, id="timeout"),
        pytest.param(StalledError, id="timeout-subclass"),
        pytest.param(stream_chunk_timeout, id="langchain-openai-stream-chunk"),
    ],
)
def test_timeouts_are_transient(make: ErrorFactory) -> None:
    assert classify_failure(make()) == "transient"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(ConnectionError(), "transient", id="connection"),
        pytest.param(ConnectionResetError(), "transient", id="reset"),
        pytest.param(ConnectionRefusedError(), "transient", id="refused"),
        pytest.param(ConnectionAbortedError(), "transient", id="aborted"),
        pytest.param(BrokenPipeError(), "transient", id="broken-pipe"),
        pytest.param(OSError("disk full"), "permanent", id="os-error"),
        pytest.param(FileNotFoundError("prompt.txt"), "permanent", id="file-not-found"),
        pytest.param(PermissionError("denied"), "permanent", id="permission"),
    ],
)
def test_connection_errors_are_transient_other_os_errors_are_not(
    error: BaseException, kind: FailureKind
) -> None:
    assert classify_failure(error) == kind


# --- Rule 7: the HTTP status --------------------------------------------------------------


@pytest.mark.parametrize(
    "status", [408, 409, 425, 429, 500, 502, 503, 504, 529, 599], ids=lambda status: str(status)
)
def test_retryable_statuses_are_transient(status: int) -> None:
    assert classify_failure(failure(status_code=status)) == "transient"


@pytest.mark.parametrize(
    "status", [400, 401, 403, 404, 405, 413, 422, 451, 499], ids=lambda status: str(status)
)
def test_other_client_statuses_are_permanent(status: int) -> None:
    assert classify_failure(failure(status_code=status)) == "permanent"


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(failure(status_code=503), id="status_code"),
        pytest.param(failure(response=SimpleNamespace(status_code=503)), id="response"),
        pytest.param(failure(status=503), id="status"),
        pytest.param(failure(code=503), id="code"),
    ],
)
def test_the_status_is_read_from_each_attribute(error: BaseException) -> None:
    assert classify_failure(error) == "transient"


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(failure(status_code="503"), id="text"),
        pytest.param(failure(status_code=True), id="bool"),
        pytest.param(failure(status_code=200), id="success"),
        pytest.param(failure(status_code=302), id="redirect"),
        pytest.param(failure(status_code=600), id="beyond-599"),
        pytest.param(failure(response=None), id="no-response"),
        pytest.param(failure(code=14), id="grpc-code"),
        pytest.param(failure(code="rate_limit_exceeded"), id="text-code"),
        pytest.param(failure(status="RESOURCE_EXHAUSTED"), id="text-status"),
    ],
)
def test_values_that_are_not_an_error_status_are_ignored(error: BaseException) -> None:
    assert classify_failure(error) == "permanent"


def test_status_code_is_read_before_code() -> None:
    assert classify_failure(failure(status_code=400, code=503)) == "permanent"


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda: openai_error("RateLimitError", 429), "transient", id="openai-429"),
        pytest.param(lambda: openai_error("ConflictError", 409), "transient", id="openai-409"),
        pytest.param(
            lambda: openai_error("InternalServerError", 500), "transient", id="openai-500"
        ),
        pytest.param(
            lambda: openai_error("InternalServerError", 503), "transient", id="openai-503"
        ),
        pytest.param(
            lambda: openai_error("InternalServerError", 529), "transient", id="openai-529"
        ),
        pytest.param(
            lambda: openai_error("AuthenticationError", 401), "permanent", id="openai-401"
        ),
        pytest.param(
            lambda: openai_error("PermissionDeniedError", 403), "permanent", id="openai-403"
        ),
        pytest.param(lambda: openai_error("BadRequestError", 400), "permanent", id="openai-400"),
        pytest.param(lambda: openai_error("NotFoundError", 404), "permanent", id="openai-404"),
        pytest.param(
            lambda: openai_error("UnprocessableEntityError", 422), "permanent", id="openai-422"
        ),
        pytest.param(lambda: httpx_status_error(503), "transient", id="httpx-503"),
        pytest.param(lambda: httpx_status_error(400), "permanent", id="httpx-400"),
        pytest.param(lambda: requests_status_error(503), "transient", id="requests-503"),
        pytest.param(lambda: requests_status_error(404), "permanent", id="requests-404"),
        pytest.param(
            lambda: stand_in("anthropic._exceptions", "OverloadedError", status_code=529)("busy"),
            "transient",
            id="anthropic-529",
        ),
        pytest.param(
            lambda: stand_in(GOOGLE_MODULE, "ResourceExhausted", code=429)("quota"),
            "transient",
            id="google-429",
        ),
        pytest.param(
            lambda: stand_in(GOOGLE_MODULE, "NotFound", code=404)("no model"),
            "permanent",
            id="google-404",
        ),
        pytest.param(
            lambda: stand_in("google.genai.errors", "ClientError")("quota"),
            "permanent",
            id="google-genai-without-code",
        ),
        pytest.param(
            lambda: failure(code=429, status="RESOURCE_EXHAUSTED"),
            "transient",
            id="google-genai-429",
        ),
        pytest.param(
            lambda: stand_in("aiohttp.client_exceptions", "ClientResponseError", status=503)(),
            "transient",
            id="aiohttp-503",
        ),
    ],
)
def test_sdk_status_errors(make: ErrorFactory, kind: FailureKind) -> None:
    assert classify_failure(make()) == kind


# --- Rule 8: transport errors of HTTP and provider SDKs -----------------------------------


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: httpx_error("ReadTimeout"), id="httpx-read-timeout"),
        pytest.param(lambda: httpx_error("ConnectTimeout"), id="httpx-connect-timeout"),
        pytest.param(lambda: httpx_error("PoolTimeout"), id="httpx-pool-timeout"),
        pytest.param(lambda: httpx_error("ConnectError"), id="httpx-connect"),
        pytest.param(lambda: httpx_error("ReadError"), id="httpx-read"),
        pytest.param(lambda: httpx_error("WriteError"), id="httpx-write"),
        pytest.param(lambda: httpx_error("RemoteProtocolError"), id="httpx-remote-protocol"),
        pytest.param(lambda: openai_request_error("APITimeoutError"), id="openai-timeout"),
        pytest.param(lambda: openai_request_error("APIConnectionError"), id="openai-connection"),
        pytest.param(lambda: requests_error("ConnectionError"), id="requests-connection"),
        pytest.param(lambda: requests_error("Timeout"), id="requests-timeout"),
        pytest.param(lambda: requests_error("ReadTimeout"), id="requests-read-timeout"),
        pytest.param(lambda: requests_error("ChunkedEncodingError"), id="requests-chunked"),
        pytest.param(lambda: urllib3_error("ReadTimeoutError"), id="urllib3-read-timeout"),
        pytest.param(lambda: ANTHROPIC_CONNECTION("down"), id="anthropic-connection"),
        pytest.param(lambda: ANTHROPIC_TIMEOUT("slow"), id="anthropic-timeout"),
        pytest.param(lambda: AIOHTTP_CONNECTION("down"), id="aiohttp-connection"),
        pytest.param(lambda: AIOHTTP_DISCONNECTED("gone"), id="aiohttp-disconnected"),
        pytest.param(lambda: stand_in("groq._exceptions", "APIConnectionError")(), id="groq"),
        pytest.param(
            lambda: stand_in("langchain_fireworks.errors", "APITimeoutError")(),
            id="langchain-package",
        ),
        pytest.param(
            lambda: type("MyTimeout", (ANTHROPIC_TIMEOUT,), {"__module__": "myapp"})(),
            id="user-subclass-of-sdk-class",
        ),
    ]
    + [
        pytest.param(lambda name=name: stand_in(GOOGLE_MODULE, name)(), id=f"google-{name}")
        for name in (
            "ServiceUnavailable",
            "ResourceExhausted",
            "DeadlineExceeded",
            "InternalServerError",
            "TooManyRequests",
        )
    ],
)
def test_sdk_transport_errors_are_transient(make: ErrorFactory) -> None:
    assert classify_failure(make()) == "transient"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: stand_in("myapp.client", "Timeout")(), id="user-timeout"),
        pytest.param(lambda: stand_in("myapp", "ReadTimeout")(), id="user-read-timeout"),
        pytest.param(lambda: stand_in("myapp", "APIConnectionError")(), id="user-connection"),
        pytest.param(lambda: stand_in("myapp", "ServiceUnavailable")(), id="user-unavailable"),
        pytest.param(lambda: stand_in("httpx_retry", "ReadTimeout")(), id="httpx-prefix"),
        pytest.param(lambda: stand_in("langchain", "APITimeoutError")(), id="langchain-bare"),
        pytest.param(lambda: stand_in("openai", "APIError")(), id="openai-other-name"),
        pytest.param(lambda: httpx_error("UnsupportedProtocol"), id="httpx-unsupported"),
        pytest.param(lambda: httpx_error("LocalProtocolError"), id="httpx-local-protocol"),
        pytest.param(lambda: httpx_error("TooManyRedirects"), id="httpx-redirects"),
        pytest.param(lambda: httpx_error("DecodingError"), id="httpx-decoding"),
    ],
)
def test_other_classes_are_not_transport_errors(make: ErrorFactory) -> None:
    assert classify_failure(make()) == "permanent"


# --- Rule 9: the cause, once --------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda: TimeoutError(), "transient", id="timeout"),
        pytest.param(lambda: openai_error("RateLimitError", 429), "transient", id="rate-limit"),
        pytest.param(lambda: httpx_error("ReadTimeout"), "transient", id="httpx-timeout"),
        pytest.param(lambda: OutputParserException("bad"), "invalid_output", id="parser"),
        pytest.param(lambda: ValueError("bad"), "permanent", id="unknown"),
    ],
)
def test_a_wrapper_is_judged_by_its_cause(make: ErrorFactory, kind: FailureKind) -> None:
    error = caused(RuntimeError("call failed"), make())

    assert classify_failure(error) == kind


def test_the_cause_is_judged_with_transient_errors() -> None:
    error = caused(RuntimeError("call failed"), FlakyError())

    assert classify_failure(error, transient_errors=(FlakyError,)) == "transient"


def test_an_error_judged_by_itself_ignores_its_cause() -> None:
    error = caused(openai_error("AuthenticationError", 401), ConnectionResetError())

    assert classify_failure(error) == "permanent"


def test_the_cause_is_followed_one_level_only() -> None:
    error = caused(RuntimeError("outer"), caused(RuntimeError("inner"), TimeoutError()))

    assert classify_failure(error) == "permanent"


def test_the_context_is_not_read() -> None:
    error = RuntimeError("bug in the handler")
    error.__context__ = TimeoutError()

    assert classify_failure(error) == "permanent"


# --- Rule 10: anything else ---------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ValueError("bad"), id="value"),
        pytest.param(KeyError("summary"), id="key"),
        pytest.param(TypeError("bad"), id="type"),
        pytest.param(AttributeError("bad"), id="attribute"),
        pytest.param(RuntimeError("bad"), id="runtime"),
        pytest.param(FlakyError("bad"), id="user-class"),
        pytest.param(asyncio.CancelledError(), id="cancelled"),
    ],
)
def test_unknown_errors_are_permanent(error: BaseException) -> None:
    assert classify_failure(error) == "permanent"


# --- retry_after --------------------------------------------------------------------------


def with_headers(headers: object) -> Exception:
    return failure(response=SimpleNamespace(headers=headers))


NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC).timestamp()
"""The clock's reading for every call of ``retry_after``: no test reads the machine's."""


def http_date(offset: timedelta, *, zone: bool = True) -> str:
    moment = datetime.fromtimestamp(NOW, UTC) + offset
    return format_datetime(moment if zone else moment.replace(tzinfo=None), usegmt=zone)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        pytest.param({"retry-after": "2"}, 2.0, id="seconds"),
        pytest.param({"retry-after": "1.5"}, 1.5, id="fractional-seconds"),
        pytest.param({"retry-after": "0"}, 0.0, id="zero"),
        pytest.param({"retry-after": "-3"}, 0.0, id="negative-seconds"),
        pytest.param({"retry-after-ms": "1500"}, 1.5, id="milliseconds"),
        pytest.param({"retry-after-ms": "-100"}, 0.0, id="negative-milliseconds"),
        pytest.param({"retry-after-ms": "250", "retry-after": "7"}, 0.25, id="ms-wins"),
        pytest.param({"retry-after-ms": "soon", "retry-after": "3"}, 3.0, id="bad-ms-skipped"),
        pytest.param({"Retry-After": "4"}, 4.0, id="title-case"),
        pytest.param({"RETRY-AFTER-MS": "500"}, 0.5, id="upper-case"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, id="past-date"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 -0000"}, 0.0, id="past-naive"),
    ],
)
def test_retry_after_reads_the_headers(headers: dict[str, str], seconds: float) -> None:
    assert retry_after(with_headers(headers), now=NOW) == seconds


@pytest.mark.parametrize("zone", [True, False], ids=["gmt", "zoneless"])
def test_retry_after_counts_down_to_an_http_date(zone: bool) -> None:
    headers = {"retry-after": http_date(timedelta(seconds=120), zone=zone)}

    assert retry_after(with_headers(headers), now=NOW) == 120.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        pytest.param("100000", 100_000.0, id="a-day-and-more"),
        pytest.param("1e308", 1e308, id="1e308"),
        pytest.param(
            "Thu, 01 Jan 2099 00:00:00 GMT",
            datetime(2099, 1, 1, tzinfo=UTC).timestamp() - NOW,
            id="date-in-2099",
        ),
        pytest.param(
            "Fri, 31 Dec 9999 23:59:59 GMT",
            datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp() - NOW,
            id="last-date",
        ),
    ],
)
def test_retry_after_gives_a_long_wait_as_asked(value: str, seconds: float) -> None:
    # RetryPolicy.max_wait caps what is waited; retry_after says what was asked.
    assert retry_after(with_headers({"retry-after": value}), now=NOW) == seconds


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"retry-after": "soon"}, id="word"),
        pytest.param({"retry-after": ""}, id="empty"),
        pytest.param({"retry-after": "nan"}, id="nan"),
        pytest.param({"retry-after": "inf"}, id="infinity"),
        pytest.param({"retry-after": "1e999"}, id="overflow"),
        pytest.param({"retry-after": "Wed, 32 Oct 2015 07:28:00 GMT"}, id="bad-date"),
        pytest.param({"retry-after": "Sat, 01 Jan 10000 00:00:00 GMT"}, id="year-10000"),
        pytest.param(
            {"retry-after": "Wed, 21 Oct 99999999999999999999 07:28:00 GMT"}, id="huge-year"
        ),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 +9999"}, id="bad-offset"),
        pytest.param({"retry-after-ms": "nan"}, id="nan-ms"),
        pytest.param({"retry-after": b"2"}, id="bytes"),
        pytest.param({"x-request-id": "req_1"}, id="absent"),
        pytest.param(None, id="none"),
        pytest.param([("retry-after", "2")], id="not-a-mapping"),
    ],
)
def test_retry_after_without_a_usable_header_is_none(headers: object) -> None:
    assert retry_after(with_headers(headers), now=NOW) is None


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ValueError("bad"), id="no-response"),
        pytest.param(failure(response=None), id="response-none"),
        pytest.param(failure(response=SimpleNamespace()), id="response-without-headers"),
    ],
)
def test_retry_after_of_an_error_without_a_response_is_none(error: BaseException) -> None:
    assert retry_after(error, now=NOW) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        pytest.param(5, 5.0, id="int"),
        pytest.param(2.5, 2.5, id="float"),
        pytest.param("7", 7.0, id="text"),
        pytest.param(-1, 0.0, id="negative"),
        pytest.param(True, None, id="bool"),
        pytest.param(10**400, None, id="huge-int"),
        pytest.param(math.nan, None, id="nan"),
        pytest.param(None, None, id="none"),
        pytest.param(object(), None, id="object"),
    ],
)
def test_retry_after_reads_the_attribute(value: object, seconds: float | None) -> None:
    assert retry_after(failure(retry_after=value), now=NOW) == seconds


def test_a_header_wins_over_the_attribute() -> None:
    error = failure(response=SimpleNamespace(headers={"retry-after": "2"}), retry_after=9)

    assert retry_after(error, now=NOW) == 2.0


def test_retry_after_reads_headers_on_the_error_itself() -> None:
    error = failure(headers={"Retry-After": "6"})

    assert retry_after(error, now=NOW) == 6.0


@pytest.mark.parametrize(
    ("make", "seconds"),
    [
        pytest.param(
            lambda: openai_error("RateLimitError", 429, **{"retry-after": "2"}), 2.0, id="openai"
        ),
        pytest.param(
            lambda: openai_error("RateLimitError", 429, **{"retry-after-ms": "750"}),
            0.75,
            id="openai-ms",
        ),
        pytest.param(
            lambda: httpx_status_error(503, **{"Retry-After": "3"}), 3.0, id="httpx-status"
        ),
        pytest.param(
            lambda: requests_status_error(503, **{"Retry-After": "4"}), 4.0, id="requests"
        ),
        pytest.param(lambda: openai_error("RateLimitError", 429), None, id="openai-without"),
    ],
)
def test_retry_after_of_sdk_errors(make: ErrorFactory, seconds: float | None) -> None:
    assert retry_after(make(), now=NOW) == seconds


def test_retry_after_reads_the_cause() -> None:
    error = caused(RuntimeError("call failed"), failure(retry_after=5))

    assert retry_after(error, now=NOW) == 5.0


def test_retry_after_prefers_the_error_to_its_cause() -> None:
    error = caused(failure(retry_after=1), failure(retry_after=5))

    assert retry_after(error, now=NOW) == 1.0


def test_retry_after_does_not_read_the_cause_of_a_langtree_error() -> None:
    error = caused(ExecutionError("the run failed"), failure(retry_after=5))

    assert retry_after(error, now=NOW) is None


# --- describe_failure ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "text"),
    [
        pytest.param(
            lambda: openai_error("RateLimitError", 429, "Rate limit reached for requests"),
            "RateLimitError (HTTP 429): Rate limit reached for requests",
            id="openai-rate-limit",
        ),
        pytest.param(
            lambda: openai_request_error("APITimeoutError"),
            "APITimeoutError: Request timed out.",
            id="openai-timeout",
        ),
        pytest.param(
            lambda: httpx_status_error(503, "Service down"),
            "HTTPStatusError (HTTP 503): Service down",
            id="httpx-status",
        ),
        pytest.param(
            lambda: failure("quota", code=429, status="RESOURCE_EXHAUSTED"),
            "Exception (HTTP 429): quota",
            id="code",
        ),
        pytest.param(TimeoutError, "TimeoutError: the call timed out", id="empty-timeout"),
        pytest.param(
            lambda: TimeoutError("read took 30 s"),
            "TimeoutError: read took 30 s",
            id="timeout-with-message",
        ),
        pytest.param(RuntimeError, "RuntimeError", id="empty-message"),
        pytest.param(lambda: KeyError("summary"), "KeyError: 'summary'", id="key"),
        pytest.param(
            lambda: ValueError("first line\n  second\tline "),
            "ValueError: first line second line",
            id="whitespace-collapsed",
        ),
        pytest.param(
            lambda: OutputParserException("Failed to parse"),
            "OutputParserException: Failed to parse For troubleshooting, visit: "
            "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE",
            id="parser",
        ),
    ],
)
def test_describe_failure(make: ErrorFactory, text: str) -> None:
    assert describe_failure(make()) == text


def test_describe_failure_cuts_a_long_message() -> None:
    text = describe_failure(ValueError("x" * 1000))

    assert text == "ValueError: " + "x" * 299 + "…"
