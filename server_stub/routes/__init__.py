"""One APIRouter per resource; `api_router()` combines the sixteen /v1 routes."""

from __future__ import annotations

from fastapi import APIRouter

PREFIX = "/v1"


def _routers() -> list[APIRouter]:
    from server_stub.routes import (
        approvals,
        artifacts,
        events,
        knowledge,
        memories,
        runs,
        sessions,
        skills,
    )

    modules = (sessions, events, runs, approvals, artifacts, memories, knowledge, skills)
    return [module.router for module in modules]


def api_router() -> APIRouter:
    """Every public route."""
    router = APIRouter(prefix=PREFIX)
    for resource in _routers():
        router.include_router(resource)
    return router


def route_templates() -> dict[int, str]:
    """The whole path template of each route object (by `id`), prefix included: an included
    route keeps its own path (`/sessions/{session_id}`), and this is what the latency
    metrics name (`server_stub.observe.requests.route_of`)."""
    return {
        id(route): PREFIX + getattr(route, "path", "")
        for resource in _routers()
        for route in resource.routes
    }
