"""`qa.public`: the purge audit through public routes is not vacuous. Pointed at sessions
that were never deleted, it must name every route that still serves them; after a real
delete it must find nothing and see the tombstone."""

from __future__ import annotations

from qa.device import plain_transport
from qa.public import Presence, PublicAudit, Truth, seed_public
from tests.conftest import LiveServer
from tests.sync.helpers import run


def test_the_public_audit_names_what_a_live_session_still_serves_and_passes_a_deleted_one(
    live_server: LiveServer,
) -> None:
    async def scenario() -> None:
        truth = Truth(live_server.url, "dev-alice", plain_transport)
        kept, deleted = await seed_public(truth, ["/artifact kept.txt bytes", "to delete"])
        assert await truth.wait_idle(deadline=float("inf"))
        audit = PublicAudit(truth)
        await audit.record(kept)
        await audit.record(deleted)
        assert audit.contents[kept].runs and audit.contents[kept].artifacts
        async with truth.client() as api:
            await api.delete_session(deleted)
        tombstones, leftovers = await audit.verify([kept, deleted])
        assert tombstones == {kept: False, deleted: True}
        assert {left.session_id for left in leftovers} == {kept}
        served = " ".join(left.what for left in leftovers)
        for route in ("/events", "/v1/runs/", "/v1/artifacts/", "/content", "knowledge"):
            assert route in served
        assert await truth.presence(deleted) is Presence.TOMBSTONED
        assert await truth.presence("ses_never") is Presence.ABSENT

    run(scenario())
