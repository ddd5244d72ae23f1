"""The walk asks for the next page while the mirror writes this one (decision 0198), and
nothing a failure or a resume sees changes for it: a page is written before what the fetch
ahead raised is raised, with the position to resume from."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.api.bounds import DEFAULT_BOUNDS
from sync.errors import Unavailable
from sync.mirror.state import ETAG_KEY, WALK_CURSOR, WALK_KEYS, WALK_SEEN
from sync.mirror.store import Mirror
from sync.reconcile.walk import IndexWalk
from sync.wire.models import SessionPage, SessionView

PAGES = 4
LIMIT = 3
WALK_KEYS_AND_ETAG = (ETAG_KEY, *WALK_KEYS)


def _view(n: int) -> SessionView:
    at = f"2026-01-01T00:00:{59 - n:02d}.000000Z"  # newest first
    return SessionView(f"ses_{n:04d}", f"Conversation {n}", at, at, None, None)


class PagedIndex:
    """`PAGES` pages of `LIMIT` sessions; the fetch of page `broken` answers 503."""

    def __init__(self, broken: int | None = None) -> None:
        self.broken = broken
        self.asked: list[str | None] = []

    @property
    def base_url(self) -> str:
        return "http://index.invalid"

    async def list_sessions(
        self, *, limit: int = LIMIT, cursor: str | None = None, etag: str | None = None
    ) -> SessionPage | None:
        self.asked.append(cursor)
        page = int(cursor[1:]) if cursor else 0
        await asyncio.sleep(0)
        if page == self.broken:
            raise Unavailable("The server is busy.", status=503)
        items = [_view(page * LIMIT + i) for i in range(LIMIT)]
        following = f"p{page + 1}" if page + 1 < PAGES else None
        return SessionPage(items, following, etag='"e"' if page == 0 else None, nbytes=100)


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[Mirror]:
    opened = Mirror.open(tmp_path / "m.sqlite3")
    yield opened
    opened.close()


def _walk(api: PagedIndex, mirror: Mirror) -> IndexWalk:
    return IndexWalk(
        api,  # type: ignore[arg-type]  # the walk asks only for pages
        mirror,
        DEFAULT_BOUNDS,
        page_limit=LIMIT,
        page_hook=None,
        skip=None,
        announce=lambda applied: None,
    )


def test_a_failed_fetch_ahead_is_raised_after_its_page_is_written(mirror: Mirror) -> None:
    api = PagedIndex(broken=2)
    state, rows, _ = mirror.pass_start(WALK_KEYS_AND_ETAG)
    with pytest.raises(Unavailable):
        asyncio.run(_walk(api, mirror).run(None, state, rows))
    assert {row.id for row in mirror.rows()} == {_view(n).id for n in range(2 * LIMIT)}
    assert mirror.get_state(WALK_CURSOR) == "p2"  # the next pass resumes at the broken page
    assert mirror.get_state(WALK_SEEN) == str(2 * LIMIT)


def test_a_walk_with_fetches_ahead_writes_every_page_once(mirror: Mirror) -> None:
    api = PagedIndex()
    state, rows, _ = mirror.pass_start(WALK_KEYS_AND_ETAG)
    result = asyncio.run(_walk(api, mirror).run(None, state, rows))
    assert result.complete and result.pages == PAGES
    assert api.asked == [None, *(f"p{n}" for n in range(1, PAGES))]
    assert len(result.inserted) == PAGES * LIMIT == len(set(result.inserted))
    assert {row.id for row in mirror.rows()} == set(result.inserted)
