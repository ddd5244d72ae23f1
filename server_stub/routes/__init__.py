"""One APIRouter per resource; `api_router()` combines the sixteen /v1 routes."""

from __future__ import annotations

from fastapi import APIRouter


def api_router() -> APIRouter:
    """Every public route."""
    from server_stub.routes import approvals, artifacts, knowledge, memories, runs, sessions

    router = APIRouter(prefix="/v1")
    for module in (sessions, runs, approvals, artifacts, memories, knowledge):
        router.include_router(module.router)
    from server_stub.routes import skills

    router.include_router(skills.router)
    return router
