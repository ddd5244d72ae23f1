"""Tables copied from `../shared/CONTRACT.md`, shared by the test suites.

They are written out here, not imported from `server_stub`, so that the tests stay an
independent reading of the contract rather than the server agreeing with itself.
"""

from __future__ import annotations

#: §3: the sixteen `/v1` operations, and nothing else.
SIXTEEN_OPERATIONS: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/v1/sessions"),
        ("POST", "/v1/sessions"),
        ("GET", "/v1/sessions/{session_id}"),
        ("DELETE", "/v1/sessions/{session_id}"),
        ("POST", "/v1/sessions/{session_id}/runs"),
        ("GET", "/v1/sessions/{session_id}/events"),
        ("GET", "/v1/runs/{run_id}"),
        ("GET", "/v1/runs/{run_id}/events"),
        ("POST", "/v1/runs/{run_id}/cancel"),
        ("POST", "/v1/approvals/{approval_id}/decision"),
        ("GET", "/v1/artifacts/{artifact_id}"),
        ("GET", "/v1/artifacts/{artifact_id}/content"),
        ("GET", "/v1/memories"),
        ("POST", "/v1/memories/{memory_id}/rejection"),
        ("GET", "/v1/knowledge/documents"),
        ("GET", "/v1/skills/{skill_id}"),
    }
)

#: §1: the error code each status carries in the envelope.
ERROR_CODES: dict[int, str] = {
    400: "invalid_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "invalid_state",
    413: "payload_too_large",
    500: "internal",
    503: "unavailable",
}
