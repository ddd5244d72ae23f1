"""The error envelope (CONTRACT §1), judged over every error answer the run saw: each
4xx and 5xx is `{"error": {"code", "message", "details"?}}` with the code of its status,
never a 422 and never a 500. Registered last so that it sees everything."""

from __future__ import annotations

from qa.conformance.probe import Answer, expect
from qa.conformance.rules import rule
from qa.conformance.world import World

CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "invalid_state",
    413: "payload_too_large",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
}


def _fault(answer: Answer) -> str | None:
    """What is wrong with one error answer's envelope, or None."""
    if answer.status not in CODES:
        return f"status {answer.status} is not one of the contract's"
    value = answer.json()
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
        return "no error object"
    error = value["error"]
    if error.get("code") != CODES[answer.status]:
        return f"error.code {error.get('code')!r}, expected {CODES[answer.status]}"
    if not isinstance(error.get("message"), str):
        return "error.message is not a string"
    if "details" in error and not isinstance(error["details"], dict):
        return "error.details is not an object"
    return None


@rule(
    "envelope.errors",
    "§1",
    "every error answer is the envelope with its status's code (never 422, never 500)",
)
async def envelope(world: World) -> None:
    p = world.probe
    await p.call("PATCH", "/v1/sessions", token=p.a, body={})  # a known path, wrong method
    for answer in p.errors:
        fault = _fault(answer)
        expect(fault is None, f"{answer.what()}: {fault}")
    expect(bool(p.errors), "no error answer was seen to judge")
