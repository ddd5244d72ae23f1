"""The one table from a `sync` error to words, fixes and Details (ui.window.failure_words)."""

from __future__ import annotations

import errno
import socket

import pytest

from sync.errors import (
    CertificateError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidRequest,
    MessageTooLong,
    NetworkError,
    ResponseTooSlow,
    RunInProgress,
    ServerError,
    TlsError,
    Unauthenticated,
    Unavailable,
)
from tests.ui.conftest import caused_by
from ui.window.failure_words import Cause, Fix, describe, host_of, index_unread

S, R = Fix.SETTINGS, Fix.RETRY


@pytest.mark.parametrize(
    ("error", "cause", "fixes", "words"),
    [
        (Unauthenticated("x", status=401), Cause.TOKEN, (S,), "refused this device's token"),
        (Forbidden("x", status=403), Cause.READ_ONLY, (S,), "read-only"),
        (CertificateError("x"), Cause.CERTIFICATE, (S,), "certificate of"),
        (TlsError("x"), Cause.TLS, (S,), "secure connection"),
        (ConnectionFailed("x"), Cause.UNREACHABLE, (S, R), "Can't reach"),
        (
            caused_by(ConnectionFailed("x"), errno.ECONNREFUSED),
            Cause.UNREACHABLE,
            (S, R),
            "Can't reach",
        ),
        (
            caused_by(ConnectionFailed("x"), errno.ENETUNREACH),
            Cause.OFFLINE,
            (R,),
            "You're offline",
        ),
        (caused_by(ConnectionFailed("x"), socket.EAI_AGAIN), Cause.OFFLINE, (R,), "offline"),
        (ResponseTooSlow("x"), Cause.SLOW, (R,), "didn't answer in time"),
        (NetworkError("x"), Cause.SLOW, (R,), "connection to"),
        (Unavailable("x", status=503), Cause.TROUBLE, (R,), "having trouble"),
        (RunInProgress("x", status=409), Cause.BUSY, (), "Stop it"),
        (Conflict("x", status=409), Cause.CONFLICT, (R,), "conflicts"),
        (InvalidRequest("x", status=400), Cause.REJECTED, (), "did not accept"),
        (MessageTooLong(100_001, 100_000), Cause.REJECTED, (), "larger than the server accepts"),
        (ServerError("x", status=500), Cause.SERVER, (R,), "had a problem"),
        (RuntimeError("bug"), Cause.INTERNAL, (), "internal error"),
    ],
)
def test_each_error_has_its_words_and_fixes(
    error: BaseException, cause: Cause, fixes: tuple[Fix, ...], words: str
) -> None:
    failure = describe(error, "Couldn't send the message", "chat.example.org")
    assert failure.cause is cause
    assert failure.fixes == fixes
    assert failure.words.startswith("Couldn't send the message. ")
    assert words in failure.words
    assert "offline" not in failure.words.lower() or cause is Cause.OFFLINE


def test_details_name_status_code_and_request_id() -> None:
    error = Unauthenticated(
        "The server refused the token.",
        status=401,
        code="unauthenticated",
        method="GET",
        path="/v1/sessions",
    )
    error.request_id = "req-123"
    details = describe(error).details
    assert details.splitlines() == [
        "The server refused the token.",
        "HTTP 401 (unauthenticated) on GET /v1/sessions",
        "Request id: req-123",
    ]


def test_the_list_names_a_setting_to_fix_but_not_a_passing_outage() -> None:
    assert index_unread(Unauthenticated("x", status=401), "h") is not None
    assert index_unread(ConnectionFailed("x"), "h") is not None  # a wrong URL: Settings
    assert index_unread(caused_by(ConnectionFailed("x"), errno.ENETUNREACH), "h") is None
    assert index_unread(Unavailable("x", status=503), "h") is None
    assert index_unread(None, "h") is None


def test_host_of_keeps_what_the_user_typed() -> None:
    assert host_of("https://chat.example.org:8443/api") == "chat.example.org:8443"
    assert host_of("http://127.0.0.1:8000") == "127.0.0.1:8000"
