"""Artifact bytes in a real S3 server (SeaweedFS, `tests/seaweed.py`): the folder store's
semantics on a bucket (CONTRACT §13), an outage that the outbox absorbs, the sweep of
half-written uploads, deleted bytes erased from SeaweedFS's own files (§9.2), and a fleet on
one bucket (§9.4)."""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from server_stub.storage import s3store
from server_stub.storage.objectstore import ObjectStoreUnavailable
from server_stub.storage.s3store import S3Location, S3ObjectStore
from tests.conftest import S3_BUCKET, LiveServer, PostgresCluster, ServerFactory, s3_overrides
from tests.server.conftest import new_session, residue, run_to_end, wait_until

pytestmark = pytest.mark.parametrize("object_store", ["s3"], indirect=True)


def _artifact(client: httpx.Client, sid: str, text: str) -> str:
    run_to_end(client, sid, f"/artifact data.txt {text}")
    events = client.get(f"/v1/sessions/{sid}/events").json()["items"]
    return str(next(e["data"]["artifact_id"] for e in events if e["type"] == "artifact.created"))


def _prefix(server: LiveServer) -> str:
    return S3Location.parse(server.settings.s3_url).prefix


def _keys(seaweed: Any, server: LiveServer) -> list[str]:
    """Every key under the server's prefix, listed by S3 itself (the residue audit)."""
    pages = seaweed.client().get_paginator("list_objects_v2")
    return sorted(
        item["Key"]
        for page in pages.paginate(Bucket=S3_BUCKET, Prefix=_prefix(server) + "/")
        for item in page.get("Contents", [])
    )


def _uploads(seaweed: Any, server: LiveServer) -> list[str]:
    answer = seaweed.client().list_multipart_uploads(Bucket=S3_BUCKET, Prefix=_prefix(server))
    return [u["Key"] for u in answer.get("Uploads", [])]


def test_artifact_bytes_live_in_the_bucket_and_leave_it_with_the_session(
    live_server: LiveServer, seaweed: Any
) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    artifact = _artifact(alice, sid, "bytes kept in a bucket")
    assert _keys(seaweed, live_server) == [f"{_prefix(live_server)}/{sid}/{artifact}"]
    content = alice.get(f"/v1/artifacts/{artifact}/content")
    assert content.status_code == 200 and content.content == b"bytes kept in a bucket"
    assert residue(live_server, sid)["objects"] == 1
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    audit = residue(live_server, sid)
    assert audit["objects"] == 0 and audit["outbox"] == 0
    assert _keys(seaweed, live_server) == []


def test_an_s3_outage_during_deletes_fills_the_outbox_and_it_drains_once_s3_is_back(
    start_server: Callable[..., LiveServer], seaweed: Any
) -> None:
    server = start_server()
    alice = server.client()
    control = server.control()
    doomed = [new_session(alice) for _ in range(2)]
    for sid in doomed:
        _artifact(alice, sid, "one")
        _artifact(alice, sid, "two")
    kept = new_session(alice)
    kept_artifact = _artifact(alice, kept, "still wanted")
    seaweed.kill_gateway()
    try:
        for sid in doomed:
            assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
        outbox = control.get("/_stub/outbox").json()
        assert outbox["pending"] == 4
        assert {item["session_id"] for item in outbox["items"]} == set(doomed)
        assert all(item["last_error"] for item in outbox["items"])
        # A read that needs the bytes is a 503 in the envelope, never a 500 (asked outside
        # the recorded clients, whose 5xx the fixture counts as failures).
        unavailable = httpx.get(
            f"{server.url}/v1/artifacts/{kept_artifact}/content",
            headers={"Authorization": "Bearer dev-alice"},
        )
        assert unavailable.status_code == 503
        assert unavailable.json()["error"]["code"] == "unavailable"
        audit = httpx.get(f"{server.url}/_stub/sessions/{kept}/residue")  # needs the listing
        assert audit.status_code == 503 and audit.json()["error"]["code"] == "unavailable"
        assert control.post("/_stub/maintenance").json() == {"outbox_pending": 4}
    finally:
        seaweed.start_gateway()
    wait_until(lambda: control.post("/_stub/maintenance").json() == {"outbox_pending": 0})
    assert _keys(seaweed, server) == [f"{_prefix(server)}/{kept}/{kept_artifact}"]
    for sid in doomed:
        assert residue(server, sid)["objects"] == 0


def test_a_half_written_upload_and_a_stray_object_are_swept_and_owned_bytes_stay(
    live_server: LiveServer, seaweed: Any
) -> None:
    alice = live_server.client()
    sid = new_session(alice)
    artifact = _artifact(alice, sid, "owned")
    s3 = seaweed.client()
    prefix = _prefix(live_server)
    half = s3.create_multipart_upload(Bucket=S3_BUCKET, Key=f"{prefix}/ses_crash/art_half")
    s3.upload_part(
        Bucket=S3_BUCKET,
        Key=f"{prefix}/ses_crash/art_half",
        UploadId=half["UploadId"],
        PartNumber=1,
        Body=b"half written by a crash",
    )
    s3.put_object(Bucket=S3_BUCKET, Key=f"{prefix}/ses_stray/art_stray", Body=b"no row")
    foreign = f"{prefix}/not/an/artifact/key"  # not the shape of ours: never touched
    s3.put_object(Bucket=S3_BUCKET, Key=foreign, Body=b"someone else's")
    assert _uploads(seaweed, live_server) == [f"{prefix}/ses_crash/art_half"]
    live_server.control().post("/_stub/maintenance")
    assert _uploads(seaweed, live_server) == []
    assert _keys(seaweed, live_server) == sorted([f"{prefix}/{sid}/{artifact}", foreign])
    assert alice.get(f"/v1/artifacts/{artifact}/content").content == b"owned"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_deleted_artifacts_bytes_leave_seaweeds_volume_files_after_maintenance(
    live_server: LiveServer, seaweed: Any
) -> None:
    """SeaweedFS keeps a deleted needle in its `.dat` until the volume is compacted, and
    its filer deletes chunks from a queue, after the DeleteObject answered: maintenance
    requests the vacuum on its passes after a delete (the compaction hook)."""
    alice = live_server.client()
    control = live_server.control()
    needle = f"Zs3-{secrets.token_hex(8)}"
    sid = new_session(alice)
    _artifact(alice, sid, f"{needle} {secrets.token_hex(600)}")
    # The scan sees the bytes once SeaweedFS has written its volume file, which a busy
    # machine delays (under the whole suite on 2 cores, past 30 s once).
    try:
        wait_until(lambda: seaweed.files_holding(needle.encode()), timeout=90.0, interval=0.5)
    except AssertionError:
        files = sorted(str(p.relative_to(seaweed.data)) for p in seaweed.data.rglob("*"))
        raise AssertionError(
            f"the artifact's bytes never reached a file: {files}\n{seaweed.log_tail()}"
        ) from None
    assert alice.delete(f"/v1/sessions/{sid}").status_code == 204
    assert residue(live_server, sid)["objects"] == 0

    def erased() -> bool:
        control.post("/_stub/maintenance")
        return not seaweed.files_holding(needle.encode())

    wait_until(erased, timeout=30.0, interval=0.2)


@pytest.mark.postgres
def test_a_fleet_on_one_postgresql_and_one_bucket_shares_the_bytes_and_their_deletion(
    object_store: str,
    server_factory: ServerFactory,
    postgres_cluster: PostgresCluster,
    seaweed: Any,
) -> None:
    """CONTRACT §9.4 with a bucket: bytes written through one process are read through
    another, the other's sweep leaves them (rows name them), and a delete through either
    leaves the bucket empty."""
    url = postgres_cluster.new_database()
    bucket = s3_overrides(seaweed)
    first, second = (
        server_factory(backend="postgres", database_url=url, **bucket) for _ in range(2)
    )
    alice_first, alice_second = first.client(), second.client()
    sid = new_session(alice_first)
    artifact = _artifact(alice_first, sid, "written by the first process")
    second.control().post("/_stub/maintenance")  # its sweep: the row names the object
    content = alice_second.get(f"/v1/artifacts/{artifact}/content")
    assert content.content == b"written by the first process"
    assert alice_second.delete(f"/v1/sessions/{sid}").status_code == 204
    assert _keys(seaweed, first) == []
    assert alice_first.get(f"/v1/artifacts/{artifact}/content").status_code == 404


@pytest.fixture
def silent_s3() -> Iterator[str]:
    """An endpoint that accepts connections and never answers (a hung S3 server)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_hung_s3_server_neither_blocks_the_start_nor_a_delete_which_queues_its_bytes(
    start_server: Callable[..., LiveServer], seaweed: Any, silent_s3: str
) -> None:
    writer = start_server()
    alice = writer.client()
    sid = new_session(alice)
    for text in ("one", "two", "three"):
        _artifact(alice, sid, text)
    writer.stop()
    same_data = {
        "database_url": writer.settings.database_url,
        "s3_url": writer.settings.s3_url,
        "s3_region": "us-east-1",
    }
    # Its start-up sweep times out and is skipped.
    hung = start_server(**same_data, s3_endpoint=silent_s3, s3_timeout=0.5)
    response = hung.client(timeout=20).delete(f"/v1/sessions/{sid}")
    assert response.status_code == 204
    assert hung.control().get("/_stub/outbox").json()["pending"] == 3
    hung.stop()
    drained = start_server(**same_data, s3_endpoint=seaweed.endpoint)
    wait_until(lambda: drained.control().post("/_stub/maintenance").json()["outbox_pending"] == 0)
    assert _keys(seaweed, writer) == []


def test_the_store_refuses_an_object_larger_than_any_artifact_and_names_a_missing_one(
    object_store: str, seaweed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bucket is outside the server: what it returns is bounded (s3store.MAX_OBJECT_BYTES,
    lowered here so the test writes kilobytes, not 64 MiB)."""
    store = S3ObjectStore(
        S3Location.parse(s3_overrides(seaweed)["s3_url"]),
        endpoint=seaweed.endpoint,
        region="us-east-1",
    )
    store.put("ses_big/art_big", b"x" * 2048)
    monkeypatch.setattr(s3store, "MAX_OBJECT_BYTES", 1024)
    with pytest.raises(ObjectStoreUnavailable, match="larger than any artifact"):
        store.get("ses_big/art_big")
    with pytest.raises(FileNotFoundError):
        store.get("ses_big/art_missing")
    with pytest.raises(ValueError):
        store.put("../escape", b"")
    store.delete("ses_big/art_big")
    assert store.count("ses_big") == 0
