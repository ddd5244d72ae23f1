"""The folder store's listings while a delete runs beside them.

A delete unlinks a session's last object and removes its folder; a listing that found the
folder a moment earlier must read it as empty, not fail. The residue route answered 503
("the object store cannot be listed") in a fresh-clone run when the maintenance loop's
retried delete landed between `count`'s `is_dir()` and its `iterdir()`. Each test runs
the delete at that exact point, deterministically, from inside the listing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from server_stub.storage.objectstore import FilesystemObjectStore, locator_for


@pytest.fixture
def store(tmp_path: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore(tmp_path / "objects")


def delete_when_listed(
    monkeypatch: pytest.MonkeyPatch, store: FilesystemObjectStore, locator: str
) -> None:
    """The first listing of the object's folder is preceded by the object's delete."""
    folder = store.root / locator.split("/")[0]
    real_iterdir = Path.iterdir

    def iterdir(self: Path) -> Iterator[Path]:
        if self == folder and folder.exists():
            store.delete(locator)  # the concurrent delete: the folder goes with its last object
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)


def test_counting_a_session_whose_last_object_is_being_deleted_finds_none(
    store: FilesystemObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    locator = locator_for("ses_a", "art_1")
    store.put(locator, b"alpha")
    delete_when_listed(monkeypatch, store, locator)
    assert store.count("ses_a") == 0


def test_listing_the_store_while_a_session_folder_goes_skips_that_folder(
    store: FilesystemObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    going, staying = locator_for("ses_a", "art_1"), locator_for("ses_b", "art_2")
    store.put(going, b"alpha")
    store.put(staying, b"beta")
    delete_when_listed(monkeypatch, store, going)
    assert store.locators() == [staying]
