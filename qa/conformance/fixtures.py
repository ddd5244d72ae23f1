"""The shared fixtures of the checks, each made once per run through public routes.

`basic`: a session with one finished plain run. `rich`: a session whose runs stored an
artifact (and its knowledge document), formed a memory and published a skill revision,
the things deletion must purge or detach (CONTRACT §3, route 4). `approval`: a run waiting
for an approval. The scripted agent's event data says which ids each command made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qa.conformance.probe import expect
from qa.conformance.world import World


@dataclass(frozen=True)
class Basic:
    session_id: str
    run_id: str


@dataclass(frozen=True)
class Rich:
    session_id: str
    artifact_id: str
    artifact_text: str
    memory_id: str
    skill_id: str
    skill_run_id: str
    document_id: str | None


@dataclass(frozen=True)
class Approval:
    session_id: str
    run_id: str
    approval_id: str


def _one(events: list[dict[str, Any]], kind: str, key: str) -> str:
    found = [e.get("data", {}).get(key) for e in events if e.get("type") == kind]
    expect(
        bool(found) and isinstance(found[-1], str),
        f"no {kind} event with data.{key} in the run's events",
    )
    return str(found[-1])


async def basic(world: World) -> Basic:
    async def make() -> Basic:
        session_id, run_id = await world.finished(f"conformance hello {world.nonce}")
        return Basic(session_id, run_id)

    result: Basic = await world.shared("basic", make)
    return result


async def rich(world: World) -> Rich:
    async def make() -> Rich:
        session_id = (await world.session())["id"]
        text = f"conformance bytes {world.nonce}"
        await world.finished(f"/artifact conformance-{world.nonce}.txt {text}", session_id)
        await world.finished(f"/remember conformance memory {world.nonce}", session_id)
        _, skill_run = await world.finished(f"/skill conformance-{world.nonce}", session_id)
        events = await world.events(session_id)
        documents = await world.walk("/v1/knowledge/documents")
        document = [d for d in documents.items if d.get("source_session_id") == session_id]
        return Rich(
            session_id=session_id,
            artifact_id=_one(events, "artifact.created", "artifact_id"),
            artifact_text=text,
            memory_id=_one(events, "memory.formed", "memory_id"),
            skill_id=_one(events, "skill.published", "skill_id"),
            skill_run_id=skill_run,
            document_id=str(document[0].get("id")) if document else None,
        )

    result: Rich = await world.shared("rich", make)
    return result


async def approval(world: World) -> Approval:
    async def make() -> Approval:
        session_id = (await world.session())["id"]
        run = await world.start(session_id, "/approve conformance-tool")
        await world.until(run["id"], frozenset({"waiting_for_approval"}))
        events = await world.events(session_id)
        return Approval(session_id, run["id"], _one(events, "approval.requested", "approval_id"))

    result: Approval = await world.shared("approval", make)
    return result
