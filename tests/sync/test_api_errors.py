"""The API client's mapping of the contract's error envelope to typed errors, its retries
and its SSE parsing, against `httpx.MockTransport` (no network)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sync import errors
from sync.api.client import ApiClient

SESSION = {
    "id": "ses_1",
    "title": "Hello",
    "created_at": "2026-01-01T00:00:00.000000Z",
    "updated_at": "2026-01-01T00:00:00.000000Z",
    "active_run_id": None,
    "last_run_id": None,
}

Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler, **kwargs: Any) -> ApiClient:
    kwargs.setdefault("retry_initial_wait", 0.001)
    kwargs.setdefault("retry_max_wait", 0.002)
    return ApiClient("http://test", "tok", transport=httpx.MockTransport(handler), **kwargs)


def envelope(status: int, code: str, details: dict[str, Any] | None = None) -> httpx.Response:
    body: dict[str, Any] = {"error": {"code": code, "message": f"{code} happened"}}
    if details is not None:
        body["error"]["details"] = details
    return httpx.Response(status, json=body)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize(
    ("status", "code", "details", "expected"),
    [
        (400, "invalid_request", None, errors.InvalidRequest),
        (401, "unauthenticated", None, errors.Unauthenticated),
        (403, "forbidden", {"required_scope": "session.read"}, errors.Forbidden),
        (404, "not_found", None, errors.NotFound),
        (404, "not_found", {"reason": "deleted"}, errors.NotFound),
        (
            409,
            "invalid_state",
            {"reason": "active_run_exists", "active_run_id": "run_9"},
            errors.ActiveRunExists,
        ),
        (409, "invalid_state", {"reason": "run_in_progress"}, errors.RunInProgress),
        (413, "payload_too_large", None, errors.PayloadTooLarge),
        (500, "internal", None, errors.ServerError),
        (503, "unavailable", None, errors.Unavailable),
        (502, "bad_gateway", None, errors.ServerError),
        (418, "teapot", None, errors.UnexpectedResponse),
    ],
)
def test_error_envelope_maps_to_typed_error(
    status: int, code: str, details: dict[str, Any] | None, expected: type[errors.ApiError]
) -> None:
    api = client(lambda request: envelope(status, code, details), retry_attempts=1)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.ApiError) as info:
                await api.get_session("ses_1")
        assert type(info.value) is expected
        assert info.value.status == status
        assert info.value.message  # always a human sentence

    run(go())


def test_not_found_carries_the_deleted_reason() -> None:
    api = client(lambda r: envelope(404, "not_found", {"reason": "deleted"}))

    async def go() -> None:
        async with api:
            with pytest.raises(errors.NotFound) as info:
                await api.get_session("ses_1")
        assert info.value.reason == "deleted"

    run(go())


def test_active_run_conflict_carries_the_run_id() -> None:
    api = client(
        lambda r: envelope(
            409, "invalid_state", {"reason": "active_run_exists", "active_run_id": "run_7"}
        )
    )

    async def go() -> None:
        async with api:
            with pytest.raises(errors.ActiveRunExists) as info:
                await api.delete_session("ses_1")
        assert info.value.active_run_id == "run_7"
        assert "run_7" in info.value.message

    run(go())


def test_forbidden_names_the_required_scope() -> None:
    api = client(lambda r: envelope(403, "forbidden", {"required_scope": "session.write"}))

    async def go() -> None:
        async with api:
            with pytest.raises(errors.Forbidden) as info:
                await api.delete_session("ses_1")
        assert info.value.required_scope == "session.write"

    run(go())


def test_400_on_a_cursor_request_is_a_bad_cursor_and_without_cursor_is_not() -> None:
    api = client(lambda r: envelope(400, "invalid_request"))

    async def go() -> None:
        async with api:
            with pytest.raises(errors.BadCursor):
                await api.list_sessions(cursor="abc")
            with pytest.raises(errors.InvalidRequest) as info:
                await api.list_sessions()
            assert not isinstance(info.value, errors.BadCursor)

    run(go())


def test_error_without_envelope_still_maps_by_status() -> None:
    api = client(lambda r: httpx.Response(503, text="<html>busy</html>"), retry_attempts=1)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.Unavailable):
                await api.get_session("ses_1")

    run(go())


def test_503_on_get_is_retried_then_succeeds() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) < 3:
            return envelope(503, "unavailable")
        return httpx.Response(200, json=SESSION)

    api = client(handler, retry_attempts=3)

    async def go() -> None:
        async with api:
            view = await api.get_session("ses_1")
        assert view.title == "Hello"

    run(go())
    assert calls == ["GET", "GET", "GET"]


def test_503_on_post_is_never_retried() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        return envelope(503, "unavailable")

    api = client(handler, retry_attempts=5)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.Unavailable):
                await api.create_session()

    run(go())
    assert calls == ["POST"]


def test_connect_error_is_retried_on_idempotent_requests_then_reported() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        raise httpx.ConnectError("refused", request=request)

    api = client(handler, retry_attempts=3)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.NetworkError) as info:
                await api.delete_session("ses_1")
        assert "Cannot reach the server" in info.value.message

    run(go())
    assert calls == ["DELETE"] * 3


def test_read_error_after_sending_is_not_retried() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        raise httpx.ReadError("connection reset", request=request)

    api = client(handler, retry_attempts=3)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.NetworkError):
                await api.delete_session("ses_1")

    run(go())
    assert calls == ["DELETE"]


def test_500_is_not_retried() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        return envelope(500, "internal")

    api = client(handler, retry_attempts=3)

    async def go() -> None:
        async with api:
            with pytest.raises(errors.ServerError):
                await api.get_session("ses_1")

    run(go())
    assert calls == ["GET"]


def test_first_page_sends_if_none_match_and_304_means_unchanged() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("If-None-Match") == '"v1"':
            return httpx.Response(304, headers={"ETag": '"v1"'})
        return httpx.Response(
            200, json={"items": [SESSION], "next_cursor": "c1"}, headers={"ETag": '"v1"'}
        )

    api = client(handler)

    async def go() -> None:
        async with api:
            page = await api.list_sessions(limit=200)
            assert page is not None and page.etag == '"v1"' and page.next_cursor == "c1"
            assert await api.list_sessions(limit=200, etag='"v1"') is None
            # If-None-Match is never sent with a cursor
            page2 = await api.list_sessions(limit=200, cursor="c1", etag='"v1"')
            assert page2 is not None and page2.etag is None

    run(go())
    assert seen[0].url.params["limit"] == "200"
    assert "If-None-Match" not in seen[2].headers
    assert seen[2].url.params["cursor"] == "c1"


def test_sse_stream_skips_keep_alive_comments() -> None:
    def frame(seq: int, typ: str) -> str:
        event = {
            "session_id": "ses_1",
            "run_id": "run_1",
            "sequence": seq,
            "type": typ,
            "created_at": "2026-01-01T00:00:00.000000Z",
            "data": {},
        }
        return f"id: {seq}\nevent: {typ}\ndata: {json.dumps(event)}\n\n"

    seen_last_id: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen_last_id.append(request.headers.get("Last-Event-ID"))
        body = ": keep-alive\n\n" + frame(4, "message.assistant") + ": keep-alive\n\n"
        body += frame(5, "run.completed")
        return httpx.Response(200, text=body, headers={"Content-Type": "text/event-stream"})

    api = client(handler)

    async def go() -> list[int]:
        async with api:
            return [e.sequence async for e in api.stream_run_events("run_1", last_event_id=3)]

    assert run(go()) == [4, 5]
    assert seen_last_id == ["3"]


def test_token_is_sent_as_bearer_and_ids_are_quoted_as_one_segment() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=SESSION)

    api = client(handler)

    async def go() -> None:
        async with api:
            await api.get_session("ses_a/b")

    run(go())
    assert seen[0].headers["Authorization"] == "Bearer tok"
    assert seen[0].url.raw_path == b"/v1/sessions/ses_a%2Fb"


def test_404_on_the_index_route_means_a_wrong_server_url() -> None:
    api = client(lambda r: httpx.Response(404, text="nothing here"))

    async def go() -> None:
        async with api:
            with pytest.raises(errors.UnexpectedResponse) as info:
                await api.list_sessions()
        assert "Check the server URL" in info.value.message

    run(go())
