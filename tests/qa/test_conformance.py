"""`converge conformance` is honest: every rule passes against the real stub (with and
without its control plane), and a server that breaks one rule (the real stub behind a
rewriting proxy) fails exactly that rule, by name."""

from __future__ import annotations

import asyncio
import http.server
import json
import re
import shutil
import socket
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qa.conformance.cli import command as run_conformance
from qa.conformance.runner import Outcome, ordered_rules, run
from server_stub.config import ServerSettings
from server_stub.runner import ServerThread
from tests.sync.rewrite_proxy import Breakage, Exchange, Memory, RewriteProxy

A, B = "dev-alice", "dev-bob"


def _start(tmp: Path, template: Path, *, control: bool) -> ServerThread:
    shutil.copyfile(template, tmp / "server.sqlite3")
    settings = ServerSettings(
        database_url=f"sqlite:///{tmp / 'server.sqlite3'}",
        artifacts_dir=tmp / "objects",
        control=control,
        agent_delay=0.0,
        maintenance_interval=3600.0,
    )
    return ServerThread(settings).start()


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Iterator[str]:
    """One stub WITHOUT --control for the whole module (a deployment's view of it)."""
    thread = _start(tmp_path_factory.mktemp("conformance"), sqlite_template, control=False)
    try:
        yield thread.url
    finally:
        thread.stop()


def _failed(outcome: Outcome) -> set[str]:
    return {v.rule for v in outcome.verdicts if not v.passed}


def _check(url: str) -> Outcome:
    return asyncio.run(run(url, A, B, deadline=120.0))


def test_every_rule_passes_against_the_stub_without_control(stub: str) -> None:
    outcome = _check(stub)
    assert _failed(outcome) == set(), [v for v in outcome.verdicts if not v.passed]
    assert outcome.left_behind == []


def test_every_rule_passes_against_the_stub_with_control(
    tmp_path: Path, sqlite_template: Path
) -> None:
    thread = _start(tmp_path, sqlite_template, control=True)
    try:
        assert _failed(_check(thread.url)) == set()
    finally:
        thread.stop()


def test_every_rule_passes_against_the_stub_on_postgresql(
    tmp_path: Path, postgres_cluster: Any
) -> None:
    settings = ServerSettings(
        database_url=postgres_cluster.new_database(),
        artifacts_dir=tmp_path / "objects",
        control=False,
        agent_delay=0.0,
        maintenance_interval=3600.0,
    )
    thread = ServerThread(settings).start()
    try:
        outcome = _check(thread.url)
        assert _failed(outcome) == set(), [v for v in outcome.verdicts if not v.passed]
    finally:
        thread.stop()


def test_the_check_leaves_no_session_behind(stub: str) -> None:
    import httpx

    asyncio.run(run(stub, A, B, deadline=60.0, only=frozenset({"index.walk-stable"})))
    for token in (A, B):
        with httpx.Client(base_url=stub, headers={"Authorization": f"Bearer {token}"}) as c:
            assert c.get("/v1/sessions", params={"limit": "200"}).json()["items"] == []


# -- breakages: each rewrites one kind of answer -----------------------------------------


def _parts(x: Exchange) -> list[str]:
    return x.path.strip("/").split("/")


def _owner_404_differs(x: Exchange, m: Memory) -> None:
    parts = _parts(x)
    if x.method == "GET" and len(parts) == 3 and parts[1] == "sessions" and x.status == 404:
        sid = parts[2]
        if sid in m.owners and m.owners[sid] != x.token and sid not in m.deleted:
            x.set_json({"error": {"code": "not_found", "message": "not yours"}})


def _delete_during_run_is_204(x: Exchange, m: Memory) -> None:
    if x.method == "DELETE" and x.status == 409:
        x.status, x.body = 204, b""
        x.answer_headers.pop("content-type", None)


def _second_delete_is_404(x: Exchange, m: Memory) -> None:
    parts = _parts(x)
    if x.method == "DELETE" and x.status == 204:
        if parts[-1] in m.marks:
            x.status = 404
            x.set_json({"error": {"code": "not_found", "message": "not found"}})
        m.marks.add(parts[-1])


def _etag_ignored(x: Exchange, m: Memory) -> None:
    if "prefer" not in x.headers:
        x.headers.pop("if-none-match", None)


def _title_not_stripped(x: Exchange, m: Memory) -> None:
    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("title"), str) and "created_at" in value:
                value["title"] += " "
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    if x.path.startswith("/v1/sessions") and x.status == 200 and x.json() is not None:
        value = x.json()
        walk(value)
        x.set_json(value)


def _cursor_skips_an_item(x: Exchange, m: Memory) -> None:
    if x.path == "/v1/sessions" and x.query.get("cursor") and x.status == 200:
        page = x.json()
        page["items"] = page["items"][1:]
        x.set_json(page)


def _envelope_without_code(x: Exchange, m: Memory) -> None:
    if x.status == 405:
        x.set_json({"error": {"message": "method not allowed"}})


def _run_409_without_reason(x: Exchange, m: Memory) -> None:
    if x.method == "POST" and x.path.endswith("/runs") and x.status == 409:
        x.set_json({"error": {"code": "invalid_state", "message": "busy"}})


def _syntax_before_auth(x: Exchange, m: Memory) -> None:
    if "authorization" not in x.headers and x.query.get("limit") == "0":
        x.status = 400
        x.set_json({"error": {"code": "invalid_request", "message": "bad limit"}})


def _deleted_without_reason(x: Exchange, m: Memory) -> None:
    parts = _parts(x)
    if x.method == "GET" and len(parts) == 3 and parts[2] in m.deleted and x.status == 404:
        x.set_json({"error": {"code": "not_found", "message": "not found"}})


BREAKAGES = {
    "ownership.plain-404": Breakage(after=_owner_404_differs),
    "delete.active-run-409": Breakage(after=_delete_during_run_is_204),
    "delete.idempotent": Breakage(after=_second_delete_is_404),
    "index.etag-304": Breakage(before=_etag_ignored),
    "title.rule": Breakage(after=_title_not_stripped),
    "index.walk-stable": Breakage(after=_cursor_skips_an_item),
    "envelope.errors": Breakage(after=_envelope_without_code),
    "runs.one-active": Breakage(after=_run_409_without_reason),
    "order.auth-first": Breakage(before=_syntax_before_auth, after=_syntax_before_auth),
    "delete.tombstone-reads": Breakage(after=_deleted_without_reason),
}


@pytest.mark.parametrize("broken", sorted(BREAKAGES))
def test_a_server_breaking_one_rule_fails_exactly_that_rule(stub: str, broken: str) -> None:
    async def check() -> Outcome:
        async with RewriteProxy(stub, BREAKAGES[broken]).running() as proxy:
            return await run(proxy.url, A, B, deadline=120.0)

    outcome = asyncio.run(check())
    assert _failed(outcome) == {broken}, [v for v in outcome.verdicts if not v.passed]
    verdict = next(v for v in outcome.verdicts if v.rule == broken)
    assert verdict.evidence


# -- the command ----------------------------------------------------------------------------


def test_the_command_exits_1_and_writes_json_and_junit_naming_the_failed_rule(
    stub: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def command() -> int:
        breakage = BREAKAGES["envelope.errors"]
        async with RewriteProxy(stub, breakage).running() as proxy:
            argv = ["--server", proxy.url, "--token", A, "--other-token", B]
            argv += ["--json", "--junit-xml", str(tmp_path / "junit.xml")]
            argv += ["--html", str(tmp_path / "report.html")]
            argv += ["--rule", "envelope.errors", "--rule", "routes.unknown-404"]
            return await asyncio.to_thread(run_conformance, argv)

    assert asyncio.run(command()) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(r["rule"], r["passed"]) for r in report["rules"]] == [
        ("routes.unknown-404", True),
        ("envelope.errors", False),
    ]
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"routes.unknown-404", "envelope.errors"}
    failure = cases["envelope.errors"].find("failure")
    assert failure is not None and "error.code" in (failure.get("message") or "")
    assert cases["routes.unknown-404"].find("failure") is None
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "envelope.errors" in page and "<script" not in page


def test_the_command_prints_a_table_and_exits_0_when_all_pass(
    stub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--server", stub, "--token", A, "--other-token", B]
    assert run_conformance([*argv, "--rule", "delete.idempotent"]) == 0
    out = capsys.readouterr().out
    assert "delete.idempotent" in out and "pass" in out


def test_an_unreachable_server_or_missing_token_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    argv = ["--server", closed, "--token", A, "--other-token", B]
    assert run_conformance(argv) == 2
    assert run_conformance(["--server", closed, "--token", A]) == 2
    assert "does not answer" in capsys.readouterr().err


def test_tokens_of_one_principal_or_without_write_scope_exit_2(
    stub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import httpx

    def listed() -> list[str]:
        with httpx.Client(base_url=stub, headers={"Authorization": f"Bearer {A}"}) as client:
            page = client.get("/v1/sessions", params={"limit": "200"}).json()
        return [item["id"] for item in page["items"]]

    before = listed()
    for other, words in (
        ("dev-alice-readonly", "token B cannot create sessions"),
        ("dev-nobody", "token B is not accepted"),
    ):
        argv = ["--server", stub, "--token", A, "--other-token", other]
        assert run_conformance(argv) == 2
        assert words in capsys.readouterr().err
    assert listed() == before  # the session made to find this out was deleted


def _hostile_title(x: Exchange, m: Memory) -> None:
    value = x.json()
    if x.method == "GET" and isinstance(value, dict) and "title" in value:
        value["title"] = "\x1b]0;owned\x07\x1b[2J\u202eevil"
        x.set_json(value)


def _endless_session(x: Exchange, m: Memory) -> None:
    session_read = _parts(x)[:2] == ["v1", "sessions"] and len(_parts(x)) == 3
    if x.method == "GET" and session_read and x.token == A:
        x.status, x.body = 200, b'{"pad": "' + b"x" * (5 * 1024 * 1024) + b'"}'


def test_a_hostile_servers_words_reach_the_terminal_inert(
    stub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async def command() -> int:
        async with RewriteProxy(stub, Breakage(after=_hostile_title)).running() as proxy:
            argv = ["--server", proxy.url, "--token", A, "--other-token", B]
            return await asyncio.to_thread(run_conformance, [*argv, "--rule", "title.rule"])

    assert asyncio.run(command()) == 1
    out = capsys.readouterr().out
    assert "title.rule" in out and "FAIL" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "]0;owned" in out  # shown, escaped


#: Appended by the proxy to every session id it hands out: a control character, a `/`, a
#: `..`, a `?` and a `#`, each of which breaks or steers a path that is not percent-encoded.
HOSTILE_TAIL = "\x01/../runs?x=#"


def _session_ids_made_hostile(x: Exchange, m: Memory) -> None:
    if HOSTILE_TAIL in x.path:
        m.marks.add("a hostile id came back")
        x.path = x.path.replace(HOSTILE_TAIL, "")
    if x.answer_headers.get("content-type", "").startswith("application/json"):
        x.body = re.sub(
            rb'"(ses_[0-9A-Za-z]+)"',
            lambda found: json.dumps(found[1].decode() + HOSTILE_TAIL).encode(),
            x.body,
        )


def test_ids_with_control_characters_and_slashes_are_sent_as_one_encoded_segment(
    stub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    breakage = Breakage(before=_session_ids_made_hostile, after=_session_ids_made_hostile)

    async def command() -> tuple[int, Memory]:
        async with RewriteProxy(stub, breakage).running() as proxy:
            argv = ["--server", proxy.url, "--token", A, "--other-token", B]
            argv += ["--json", "--rule", "ownership.plain-404", "--rule", "delete.idempotent"]
            return await asyncio.to_thread(run_conformance, argv), proxy.memory

    status, memory = asyncio.run(command())
    captured = capsys.readouterr()
    # every id reached the route it names, so the rules hold and the cleanup found them
    assert status == 0, (captured.out, captured.err)
    assert "a hostile id came back" in memory.marks
    assert json.loads(captured.out)["left_behind"] == []


def test_an_answer_past_the_byte_cap_fails_the_rule_without_reading_it_all(stub: str) -> None:
    async def check() -> Outcome:
        async with RewriteProxy(stub, Breakage(after=_endless_session)).running() as proxy:
            return await run(proxy.url, A, B, deadline=60.0, only=frozenset({"title.rule"}))

    outcome = asyncio.run(check())
    (verdict,) = outcome.verdicts
    assert not verdict.passed and "exceeds" in verdict.evidence


def test_a_server_that_never_answers_gets_no_pass_and_the_run_ends_at_its_deadline(
    stub: str,
) -> None:
    def runs_read(x: Exchange) -> bool:
        return x.method == "GET" and x.path.startswith("/v1/runs/")

    async def check() -> Outcome:
        async with RewriteProxy(stub, Breakage(hang=runs_read)).running() as proxy:
            only = frozenset({"runs.one-active"})
            return await run(proxy.url, A, B, deadline=8.0, only=only)

    outcome = asyncio.run(check())  # returns: every request and the whole run are bounded
    (verdict,) = outcome.verdicts
    # The 8 s deadline ends the rule before its 15 s request bound could fail it: no pass,
    # and the server is not blamed for the time the caller allowed.
    assert not verdict.passed and not verdict.checked and "deadline" in verdict.evidence


def test_rules_the_deadline_cuts_off_are_not_checked_not_failed_and_exit_2(
    tmp_path: Path, sqlite_template: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = _start(tmp_path, sqlite_template, control=False)  # its own: cleanup is short
    try:
        argv = ["--server", thread.url, "--token", A, "--other-token", B]
        argv += ["--deadline", "4", "--json", "--junit-xml", str(tmp_path / "junit.xml")]
        argv += ["--html", str(tmp_path / "report.html")]
        status = run_conformance(argv)
    finally:
        thread.stop()
    captured = capsys.readouterr()
    assert status == 2 and "not checked" in captured.err and "--deadline" in captured.err
    report = json.loads(captured.out)
    assert report["passed"] is False and report["complete"] is False
    unchecked = [r for r in report["rules"] if not r["checked"]]
    assert unchecked and all("deadline" in r["evidence"] for r in unchecked)
    assert [r for r in report["rules"] if r["checked"] and not r["passed"]] == []
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    assert suite.get("failures") == "0" and suite.get("skipped") == str(len(unchecked))
    heading = (tmp_path / "report.html").read_text(encoding="utf-8").split("</h1>")[0]
    assert "not checked" in heading and "FAIL" not in heading  # the badge said FAIL


class _NotTheApi(http.server.BaseHTTPRequestHandler):
    """Any web server at the wrong URL: a plain 404 page for every request."""

    def _answer(self) -> None:
        body = b"<html><body>404 Not Found</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


def test_a_url_that_is_not_the_api_exits_2_blaming_the_url_not_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotTheApi)
    serving = threading.Thread(target=web.serve_forever, daemon=True)
    serving.start()
    try:
        url = f"http://127.0.0.1:{web.server_address[1]}"
        argv = ["--server", url, "--token", A, "--other-token", B]
        status = run_conformance([*argv, "--junit-xml", str(tmp_path / "junit.xml")])
    finally:
        web.shutdown()
        web.server_close()
    err = capsys.readouterr().err
    assert status == 2 and "does not serve the Converge API" in err and "--server" in err
    assert "token A" not in err
    suite = ET.parse(tmp_path / "junit.xml").getroot()  # CI finds why nothing was checked
    (error,) = suite.iter("error")
    assert "does not serve the Converge API" in (error.get("message") or "")
    for bad in ("not-a-url", "ftp://127.0.0.1/", "http://", "http://127.0.0.1:0"):
        assert run_conformance(["--server", bad, "--token", A, "--other-token", B]) == 2
        assert "not an http(s) URL" in capsys.readouterr().err
    # a port out of range or a broken IPv6 literal: an exception group or a bare ValueError
    # from httpx, printed as "unexpected error" with exit 1, before they were checked here
    for bad in ("http://localhost:99999", "http://localhost:abc", "http://[::1"):
        assert run_conformance(["--server", bad, "--token", A, "--other-token", B]) == 2
        assert "is not a valid URL" in capsys.readouterr().err


def test_the_rule_table_in_docs_is_the_registry() -> None:
    text = (Path(__file__).parents[2] / "docs" / "qa.md").read_text()
    section = text.split("### The rules", 1)[1].split("\n#", 1)[0]  # qa.md has other tables
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows == [f"| `{r.id}` | {r.section} | {r.summary} |" for r in ordered_rules()]
