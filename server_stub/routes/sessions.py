"""Routes 1–5: the session index, sessions, their deletion and run start (the event pages,
route 6, are `server_stub.routes.events`)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Sequence
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import (
    ClauseElement,
    Row,
    Select,
    bindparam,
    literal_column,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql.psycopg import dialect as psycopg_dialect
from sqlalchemy.dialects.sqlite.pysqlite import dialect as sqlite_dialect
from sqlalchemy.orm import Session

from server_stub.db.engine import LockedNow
from server_stub.db.models import RunRow, SessionRow
from server_stub.domain import clock, ids, purge
from server_stub.domain.cursors import Position
from server_stub.domain.history import (
    VERSION_OF,
    append_event,
    bump_version,
    derived_title,
    etag_for,
    first_user_message,
    index_version,
    lock_session,
    owned,
    run_view,
    session_view,
    session_views,
    tombstone_of,
)
from server_stub.domain.leases import claim
from server_stub.domain.legacytitles import DerivedTitles, Missing
from server_stub.domain.titles import title_from_message
from server_stub.domain.watches import client_gone, parse_wait
from server_stub.edge import schemas
from server_stub.edge.auth import Principal
from server_stub.edge.errors import ApiError, invalid_state, not_found
from server_stub.routes.common import (
    parse_cursor,
    parse_limit,
    read_json_object,
    validate_message,
)
from server_stub.state import AppState, get_state

router = APIRouter(tags=["sessions"])
StateDep = Annotated[AppState, Depends(get_state)]

SESSION_NOT_FOUND = "session not found"


def plain_404() -> ApiError:
    return not_found(SESSION_NOT_FOUND)


@router.get(
    "/sessions",
    response_model=schemas.SessionPage,
    responses={
        200: {
            "headers": {
                "ETag": schemas.ETAG_HEADER,
                "Preference-Applied": schemas.PREFERENCE_APPLIED_HEADER,
            }
        },
        304: {
            "description": "Not modified (at once, or after a `Prefer: wait=N` without change)",
            "headers": {
                "ETag": schemas.ETAG_HEADER,
                "Preference-Applied": schemas.PREFERENCE_APPLIED_HEADER,
            },
        },
        **schemas.errors(400, 401, 403),
    },
    openapi_extra=schemas.parameters(
        schemas.limit(50, 200), schemas.CURSOR, schemas.IF_NONE_MATCH, schemas.PREFER_WAIT
    ),
    summary="List the caller's sessions, most recently active first",
)
async def list_sessions(request: Request) -> Response:
    # The state is looked up here rather than as a FastAPI dependency: this route answers
    # most of the traffic, and resolving a dependency cost more than the lookup itself.
    st = get_state(request)
    who = st.tokens.require(request, "session.read")
    limit = parse_limit(request, 50, 200)
    cursor = parse_cursor(request)
    after = st.cursors.decode(cursor, "sessions", who.tenant, who.principal) if cursor else None
    inm = request.headers.get("if-none-match")
    # Held requests (CONTRACT §9.1): only a conditional first page may wait.
    wait = None
    if cursor is None and inm is not None and st.settings.index_watch:
        wait = parse_wait(request.headers.getlist("prefer"))

    headers: dict[str, str] = {}
    # Taken before any version read, so a version read below may be remembered with it.
    generation = st.versions.generation()
    seen: int | None = None
    read: _Page | None = None
    if cursor is None and inm is not None:
        etag, held, seen, read = await _hold_while_unchanged(st, who, inm, wait, request, limit)
        if held:  # a stale If-None-Match answers at once, as without the preference
            headers["Preference-Applied"] = f"wait={wait}"
        if etag is not None:
            headers["ETag"] = etag
            return Response(status_code=304, headers=headers)
    # A remembered version, or the one the conditional check just read, is never newer
    # than the page read after it, so the ETag never claims more than the page holds (at
    # worst less: the next request gets a 200 again).
    known = st.versions.get(who.tenant, who.principal) if after is None else 0
    if known is None:
        known = seen  # not trusted: the version the check just read, not read a second time
    if known is None and st.pg_reader is not None:
        # One round trip: the version, and the page unless the one remembered is of it.
        known, read = await _pg_first_page(st, who, limit)
    if after is None and known is not None and read is None:
        body = st.versions.page(who.tenant, who.principal, known, limit)
        if body is not None:  # unchanged since it was read (`server_stub.domain.indexversions`)
            headers["ETag"] = etag_for(st.epoch, who.tenant, who.principal, known)
            return Response(body, media_type="application/json", headers=headers)

    params: dict[str, Any] = {"tenant": who.tenant, "principal": who.principal, "limit": limit + 1}
    first = after is None
    if after is not None:
        params |= {"ts": after.timestamp, "id": after.item_id}

    def work(s: Session) -> _Page:
        # Only the first page carries an ETag; a walk's other pages skip the version read.
        version = index_version(s, who.tenant, who.principal) if known is None else known
        rows = s.connection().execute(_FIRST_PAGE if first else _NEXT_PAGE, params).all()
        views = _index_views(s, rows[:limit], st.titles)
        more = Position(views[-1]["updated_at"], views[-1]["id"]) if len(rows) > limit else None
        return [_json(view) for view in views], more, version

    page = read
    if page is None and st.pg_reader is not None:
        page = await _pg_page(st, who, _PG_PAGES[first], params, limit, known)
    elif st.db.is_sqlite:
        page = _sqlite_page(st, who, _SQLITE_PAGES[first], params, limit, known)
    if page is None:
        page = await st.read(work)
    items, more, version = page
    next_cursor = None
    if more is not None:
        next_cursor = st.cursors.encode("sessions", who.tenant, who.principal, more)
    if cursor is None:
        st.versions.remember(who.tenant, who.principal, version, generation)
        etag = etag_for(st.epoch, who.tenant, who.principal, version)
        headers["ETag"] = etag
        if inm is not None and _etag_matches(inm, etag):
            return Response(status_code=304, headers=headers)
    # The bytes `JSONResponse({"items": views, "next_cursor": next_cursor})` renders, from
    # items the database rendered (`_rendered`).
    body = f'{{"items":[{",".join(items)}],"next_cursor":{_json(next_cursor)}}}'.encode()
    if cursor is None:  # the rendered bytes, sent again while the version stays
        st.versions.remember_page(who.tenant, who.principal, version, limit, body, generation)
    return Response(body, media_type="application/json", headers=headers)


async def current_version(st: AppState, who: Principal) -> int:
    """The principal's index version: remembered by this process where that is exact
    (SQLite, `server_stub.domain.indexversions`), else read from the database, and remembered."""
    known = st.versions.get(who.tenant, who.principal)
    if known is not None:
        return known
    generation = st.versions.generation()

    def read(s: Session) -> int:
        return index_version(s, who.tenant, who.principal)

    if st.pg_reader is not None:
        version = await _pg_version(st, who)
    else:
        version = await st.read(read)
    st.versions.remember(who.tenant, who.principal, version, generation)
    return version


async def _pg_version(st: AppState, who: Principal) -> int:
    """PostgreSQL: the version, read on the loop (`server_stub.db.pgloop`)."""
    assert st.pg_reader is not None
    params = {"tenant": who.tenant, "principal": who.principal}
    rows = await st.pg_reader.fetch(_pg_sql(VERSION_OF), params)
    return int(rows[0][0]) if rows else 0


async def _pg_page(
    st: AppState,
    who: Principal,
    stmt: ClauseElement,
    params: dict[str, Any],
    limit: int,
    known: int | None,
) -> _Page | None:
    """PostgreSQL: a page read on the loop, version first (an ETag is never newer than its
    page); None when a legacy session's title is not remembered yet (the thread path
    derives it, `server_stub.domain.legacytitles`)."""
    assert st.pg_reader is not None
    version = await _pg_version(st, who) if known is None else known
    rows = cast(Sequence[_RenderedRow], await st.pg_reader.fetch(_pg_sql(stmt), params))
    return _rendered_page(rows, limit, st.titles, version)


async def _pg_first_page(st: AppState, who: Principal, limit: int) -> tuple[int, _Page | None]:
    """PostgreSQL: the version and, unless the page remembered for this principal and
    `limit` is of that version, the first page, in one statement (`_PG_VERSION_AND_PAGE`:
    one snapshot, so the ETag is never newer than the page). The page is None when the
    remembered one is current, or when a legacy session's title is not remembered yet (the
    caller reads it the usual way)."""
    assert st.pg_reader is not None
    kept = st.versions.page_version(who.tenant, who.principal, limit)
    params = {
        "tenant": who.tenant,
        "principal": who.principal,
        "limit": limit + 1,
        "kept": -1 if kept is None else kept,
    }
    got = await st.pg_reader.fetch(_pg_version_and_page(), params)
    version = int(got[0][0]) if got else 0
    if version == kept:
        return version, None
    rows = cast(Sequence[_RenderedRow], [row[1:] for row in got if row[1] is not None])
    return version, _rendered_page(rows, limit, st.titles, version)


@functools.cache
def _pg_version_and_page() -> str:
    """The principal's version (0 before any) and, in the same statement, the first page
    when the version is not `%(kept)s`: a lateral subquery under a one-time filter, so an
    unchanged index reads no session row."""
    return (
        f"SELECT v.version, p.* FROM (SELECT coalesce(({_pg_sql(VERSION_OF)}), 0) AS version) AS v"
        f" LEFT JOIN LATERAL (SELECT * FROM ({_pg_sql(_PG_PAGES[True])}) AS page"
        " WHERE v.version <> %(kept)s) AS p ON true"
    )


def _sqlite_page(
    st: AppState,
    who: Principal,
    stmt: ClauseElement,
    params: dict[str, Any],
    limit: int,
    known: int | None,
) -> _Page | None:
    """SQLite: a page read on the loop through the driver's cursor (`Database.fetch_now`,
    decision 0160), version first (an ETag is never newer than its page); None when the
    database is locked at that instant or a legacy session's title is not remembered yet
    (the Session path does both: a worker thread, `server_stub.domain.legacytitles`)."""
    statements = []
    if known is None:
        version_sql, version_defaults = _sqlite_sql(VERSION_OF)
        statements.append((version_sql, version_defaults | params))
    page_sql, page_defaults = _sqlite_sql(stmt)
    statements.append((page_sql, page_defaults | params))
    try:
        results = st.db.fetch_now(statements)
    except LockedNow:
        return None
    if known is None:
        known = int(results[0][0][0] or 0) if results[0] else 0
    return _rendered_page(cast(Sequence[_RenderedRow], results[-1]), limit, st.titles, known)


@functools.cache
def _sqlite_sql(stmt: ClauseElement) -> tuple[str, dict[str, Any]]:
    """A statement's SQLite text with `:name` parameters, compiled once, and the values of
    the parameters it adds itself (SQLite's `LIMIT … OFFSET :param_1`)."""
    compiled = stmt.compile(dialect=_SQLITE_DIALECT)
    defaults = {k: v for k, v in compiled.params.items() if v is not None}
    return str(compiled), defaults


_SQLITE_DIALECT = sqlite_dialect(paramstyle="named")


@functools.cache
def _pg_sql(stmt: ClauseElement) -> str:
    """A statement's PostgreSQL text with `%(name)s` parameters, compiled once."""
    return str(stmt.compile(dialect=_PG_DIALECT))


_PG_DIALECT = psycopg_dialect()  # type: ignore[no-untyped-call]


# The columns a SessionView needs, read as plain rows: building 200 ORM objects per page
# costs more than the query itself.
_INDEX_COLUMNS = (
    SessionRow.id,
    SessionRow.title,
    SessionRow.title_state,
    SessionRow.created_at,
    SessionRow.updated_at,
    SessionRow.active_run_id,
    SessionRow.last_run_id,
)


_INDEX_ORDER = (SessionRow.updated_at.desc(), SessionRow.id.desc())
_OWNER = (SessionRow.tenant == bindparam("tenant"), SessionRow.principal == bindparam("principal"))
# Both page queries are built once (building a statement per request is a large share of a
# page read).
_FIRST_PAGE = select(*_INDEX_COLUMNS).where(*_OWNER).order_by(*_INDEX_ORDER)
_FIRST_PAGE = _FIRST_PAGE.limit(bindparam("limit"))
# The redundant `updated_at <= ts` is what lets SQLite seek the index to the cursor: with the
# OR alone it walks the principal's rows from the top, so a page's cost would grow with its
# depth.
_NEXT_PAGE = (
    select(*_INDEX_COLUMNS)
    .where(
        *_OWNER,
        SessionRow.updated_at <= bindparam("ts"),
        or_(SessionRow.updated_at < bindparam("ts"), SessionRow.id < bindparam("id")),
    )
    .order_by(*_INDEX_ORDER)
    .limit(bindparam("limit"))
)

_IndexRow = Row[str, str | None, str, str, str, str | None, str | None]
#: A page as read: its items' JSON, the position of its last item when more follow (else
#: None), and the version it is of (a walk's later pages: the one known, or 0).
_Page = tuple[list[str], Position | None, int]

# The loop's reads (`_pg_page`, `_sqlite_page`) have the database give each item's JSON,
# exactly the bytes `json.dumps` writes for a SessionView (`_json`: the key order, `null`,
# the escapes of `"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and `\u00XX` for other controls,
# every other character as it is in UTF-8), so that a page costs Python one join, not a dict
# and an encoding per row. SQLite: `json_object`, as the page is read. PostgreSQL: the
# stored `sessions.index_item`, written by every write of the row (`models.INDEX_ITEM_DDL`),
# so that a page's statement writes no JSON at all.
_SQLITE_ITEM_JSON = (
    "json_object('id', sessions.id, 'title', sessions.title,"
    " 'created_at', sessions.created_at, 'updated_at', sessions.updated_at,"
    " 'active_run_id', sessions.active_run_id, 'last_run_id', sessions.last_run_id)"
)
_ITEM_JSON = {"sqlite": _SQLITE_ITEM_JSON, "postgresql": "sessions.index_item"}


def _rendered(stmt: Select[*tuple[Any, ...]], dialect: str) -> ClauseElement:
    """`stmt` reading (item JSON, title_state) instead of `_INDEX_COLUMNS`."""
    return stmt.with_only_columns(literal_column(_ITEM_JSON[dialect]), SessionRow.title_state)


#: Rendered pages by "is it the first page".
_SQLITE_PAGES = {True: _rendered(_FIRST_PAGE, "sqlite"), False: _rendered(_NEXT_PAGE, "sqlite")}
_PG_PAGES = {
    True: _rendered(_FIRST_PAGE, "postgresql"),
    False: _rendered(_NEXT_PAGE, "postgresql"),
}
_RenderedRow = tuple[str, str]


def _json(value: Any) -> str:
    """`value` as `JSONResponse` renders it."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _rendered_page(
    rows: Sequence[_RenderedRow], limit: int, titles: DerivedTitles, version: int
) -> _Page | None:
    """The page of `(item JSON, title_state)` rows (one past the page, to see whether more
    follow); a legacy session's item gets its remembered title (`server_stub.domain.legacytitles`),
    None when one is not remembered yet (the Session path derives it)."""
    items = []
    for item, title_state in rows[:limit]:
        if title_state == "legacy":
            view = json.loads(item)
            known = titles.get(view["id"])
            if isinstance(known, Missing):
                return None
            view["title"] = known
            item = _json(view)
        items.append(item)
    more = None
    if len(rows) > limit:
        last = json.loads(items[-1])
        more = Position(last["updated_at"], last["id"])
    return items, more, version


def _index_views(
    s: Session, rows: Sequence[_IndexRow], titles: DerivedTitles
) -> list[dict[str, Any]]:
    """SessionViews (the shape of `history.session_view`) of `_INDEX_COLUMNS` rows; a legacy
    session's title is derived from its first user message, as on every read path, and
    remembered (`server_stub.domain.legacytitles`)."""
    views = []
    for sid, title, title_state, created_at, updated_at, active_run_id, last_run_id in rows:
        if title_state == "legacy":
            title = derived_title(s, sid, titles)
        views.append(
            {
                "id": sid,
                "title": title,
                "created_at": created_at,
                "updated_at": updated_at,
                "active_run_id": active_run_id,
                "last_run_id": last_run_id,
            }
        )
    return views


async def _checked_version(st: AppState, who: Principal, limit: int) -> tuple[int, _Page | None]:
    """The version for a conditional check, and on PostgreSQL the first page read in the
    same statement when it is not the one remembered (`_pg_first_page`): an ETag that no
    longer matches is then answered without a second round trip."""
    if st.pg_reader is None or st.versions.get(who.tenant, who.principal) is not None:
        return await current_version(st, who), None
    generation = st.versions.generation()
    version, page = await _pg_first_page(st, who, limit)
    st.versions.remember(who.tenant, who.principal, version, generation)
    return version, page


async def _hold_while_unchanged(
    st: AppState, who: Principal, inm: str, wait: int | None, request: Request, limit: int
) -> tuple[str | None, bool, int, _Page | None]:
    """(etag, held, version, page): the current ETag while it matches `inm` (answer 304),
    after holding the request up to `wait` seconds for a change; None once the index differs
    (answer 200, at `version`, the last one read, with the page when it was read with it).
    `held` says whether the request matched and so the wait was applied.

    The wake-up is taken before the version is read, so a commit in between still wakes
    it; a woken request reads the version again. Nothing is held across the wait but an
    `asyncio.Event` (no thread, no connection). A client that disconnects ends the wait.
    """

    deadline = st.loop.time() + (wait or 0)
    held = False
    admitted = False
    gone: asyncio.Future[None] | None = None
    woken_by: asyncio.Event | None = None  # the wake-up that ended the last hold
    try:
        while True:
            wake = st.watches.subscribe(who.tenant, who.principal) if wait is not None else None
            try:
                if woken_by is None or st.pg_reader is None:
                    version, page = await _checked_version(st, who, limit)
                else:  # one read for all the watches this wake-up woke
                    version, page = await st.watches.read_once(
                        woken_by, limit, lambda: _checked_version(st, who, limit)
                    )
                etag = etag_for(st.epoch, who.tenant, who.principal, version)
                if not _etag_matches(inm, etag):
                    return None, held, version, page
                held = wake is not None
                remaining = deadline - st.loop.time()
                if wake is None or remaining <= 0:
                    return etag, held, version, None
                if not admitted:
                    refused_by = st.watches.admit(who.tenant, who.principal)
                    if refused_by is not None:  # past a cap: as if no wait was asked (§10.2)
                        _log_watch_refusal(st, refused_by)
                        return etag, False, version, None
                    admitted = True
                if gone is None:
                    gone = asyncio.ensure_future(client_gone(request.receive))
                if not await st.watches.hold(wake, remaining, gone):
                    return etag, held, version, None
                woken_by = wake
            finally:
                if wake is not None:
                    st.watches.unsubscribe(who.tenant, who.principal, wake)
    finally:
        if admitted:
            st.watches.leave(who.tenant, who.principal)
        if gone is not None:
            gone.cancel()


def _log_watch_refusal(st: AppState, refused_by: str) -> None:
    limit = (
        st.watches.max_per_principal if refused_by == "principal" else st.watches.max_per_process
    )
    st.repeat_log.warning(
        f"watch-cap-{refused_by}",
        "index watch answered at once: the %s cap of %d held watches is reached",
        refused_by,
        limit,
    )


def _etag_matches(header: str, etag: str) -> bool:
    candidates = [c.strip() for c in header.split(",")]
    return "*" in candidates or etag in candidates or f"W/{etag}" in candidates


def create_session_row(s: Session, who: Principal, at: str | None = None) -> SessionRow:
    """A new, empty session owned by `who` (title pending until its first run), on top of
    its owner's index: dated by the one clock (`clock.activity_time`) unless `at` is given."""
    created = at or clock.activity_time(s, who.tenant, who.principal)
    row = SessionRow(
        id=ids.new_id("ses"),
        tenant=who.tenant,
        principal=who.principal,
        title=None,
        title_state="pending",
        created_at=created,
        updated_at=created,
        last_event_at=None,
        last_sequence=0,
    )
    s.add(row)
    s.flush()
    return row


@router.post(
    "/sessions",
    status_code=201,
    response_model=schemas.SessionView,
    responses=schemas.errors(400, 401, 403, 413, 429),
    openapi_extra=schemas.OPTIONAL_OBJECT_BODY,
    summary="Create an empty session",
)
async def create_session(request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "session.write")
    await read_json_object(request, allow_empty=True)

    def work() -> dict[str, Any]:
        with st.db.write() as s:
            row = create_session_row(s, who)
            bump_version(s, who.tenant, who.principal)
            return session_view(row)

    return JSONResponse(await st.run(work), status_code=201)


@router.get(
    "/sessions/{session_id}",
    response_model=schemas.SessionView,
    responses=schemas.errors(401, 403, 404),
    summary="Read one session",
)
async def get_session(session_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "session.read")

    # A read like the index's (`AppState.read`: on SQLite on the loop): a delete makes every
    # watching device of the principal point-read the row at once, and fifty hops to the
    # request threads cost more than the reads themselves.
    def work(s: Session) -> dict[str, Any]:
        row = s.get(SessionRow, session_id)
        if owned(row, who.tenant, who.principal):
            assert row is not None
            return session_views(s, [row], st.titles)[0]
        # The tombstone is read for a foreign live session too, so that its 404 costs
        # the same statements as a missing id's (else the time tells them apart).
        tomb = tombstone_of(s, session_id)
        mine = tomb is not None and (tomb.tenant, tomb.principal) == (who.tenant, who.principal)
        if row is None and mine:
            raise ApiError(404, SESSION_NOT_FOUND, {"reason": "deleted"})
        raise plain_404()

    return JSONResponse(await st.read(work))


@router.delete(
    "/sessions/{session_id}",
    status_code=204,
    response_class=Response,
    responses=schemas.errors(401, 403, 404, 409, 429),
    summary="Delete a session and its whole conversation graph, everywhere",
)
async def delete_session(session_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "session.write")
    # SQLite: a small session is purged on the loop when no other writer is there (0196).
    outcome = purge.delete_now(st.db, who, session_id) if st.db.is_sqlite else None
    if outcome is None:
        outcome = await st.run(lambda: purge.delete_session(st.db, who, session_id))
    if outcome.kind == "deleted":
        st.titles.drop(session_id)  # nothing of a deleted conversation is kept (§9.2)
    if outcome.kind == "not_found":
        raise plain_404()
    if outcome.kind == "active":
        raise invalid_state(
            "a run is active in this session",
            reason="active_run_exists",
            active_run_id=outcome.active_run_id,
        )
    if outcome.queued:
        await st.run(lambda: purge.flush_outbox(st.db, st.store, session_id))
    if outcome.purged:
        st.scrubber.request()  # content leaves the files soon after the 204 (CONTRACT §9.2)
    return Response(status_code=204)


async def delete_of(session_id: str, request: Request) -> Response:
    """`delete_session` for `server_stub.edge.indexpath`, which serves it without the router."""
    return await delete_session(session_id, request, get_state(request))


@router.post(
    "/sessions/{session_id}/runs",
    status_code=202,
    response_model=schemas.RunView,
    responses=schemas.errors(400, 401, 403, 404, 409, 413, 429),
    openapi_extra=schemas.body(schemas.RunRequest),
    summary="Start a run with a user message",
)
async def start_run(session_id: str, request: Request, st: StateDep) -> Response:
    who = st.tokens.require(request, "run.write")
    doc = await read_json_object(request)
    message = validate_message(doc.get("input"))

    def work() -> dict[str, Any]:
        with st.db.write() as s:
            row = lock_session(s, session_id)
            if not owned(row, who.tenant, who.principal):
                raise plain_404()
            assert row is not None
            if row.active_run_id is not None:
                raise invalid_state(
                    "a run is already in progress",
                    reason="run_in_progress",
                    active_run_id=row.active_run_id,
                )
            # The run's time is its run.started event's: by the one clock, after all of the
            # owner's activity (last_run_id follows run start times, so they never go back).
            now = clock.activity_time(s, row.tenant, row.principal, row.last_event_at)
            run = RunRow(
                id=ids.new_id("run"),
                session_id=row.id,
                tenant=row.tenant,
                principal=row.principal,
                status="queued",
                input=message,
                created_at=now,
                updated_at=now,
                completed_at=None,
                cancel_requested=False,
            )
            s.add(run)
            s.flush()
            if row.title_state != "stored":
                existing = first_user_message(s, row.id)
                row.title = title_from_message(existing if existing else message)
                row.title_state = "stored"
            row.active_run_id = run.id
            claim(s, run.id, st.agents.owner, st.settings.run_lease_seconds)
            append_event(s, row, run.id, "run.started", {}, at=now)
            append_event(s, row, run.id, "message.user", message)
            return run_view(run)

    view = await st.run(work)
    st.agents.start(view["id"])
    return JSONResponse(view, status_code=202)
