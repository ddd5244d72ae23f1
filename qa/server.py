"""The stub server as a child process for `converge qa`, and its `/_stub` control plane
(optional: `probe` tells whether a server has it, CONTRACT §12).

Why a subprocess and not `server_stub.runner.ServerThread`: a restart must be real (SIGTERM,
the process exits, a new one opens the same database), and `sync` never imports the server
package (docs/architecture.md). The child is started with `--port 0` the first time; the
port it announces (`listening on http://HOST:PORT`, the first stdout line, CONTRACT §5) is
reused by every restart, so the devices' base URL stays valid across restarts.

The child is stopped on every exit path: `async with ServerProcess(...)` stops it, and an
`atexit` hook kills it should the event loop die before that.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import re
import signal
import sys
from pathlib import Path
from typing import IO, Any

import httpx

from qa.public import ATTEMPTS
from sync.api.request import backoff

log = logging.getLogger(__name__)

LISTENING = re.compile(r"listening on (http://\S+)")
#: How long a child may take to announce itself. Generous: on a loaded machine (a soak's
#: worker processes starting beside it) the stub's imports and database set-up take far
#: longer than on an idle one, and a start that gives up too early ends the whole run
#: (`converge qa --server-start-timeout`).
START_TIMEOUT = 120.0
STOP_TIMEOUT = 10.0
#: Transport errors that mean the request never left: repeating it is safe for any method.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


class QaSetupError(Exception):
    """The harness could not set up its server (it never started, or lacks the control plane)."""


def server_command() -> list[str]:
    """`converge-server` beside this interpreter when installed, else `python -m`."""
    script = Path(sys.executable).with_name("converge-server")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "server_stub.cli"]


class ServerProcess:
    """One stub server child process on a SQLite file in `workdir`; restartable in place."""

    def __init__(
        self,
        workdir: Path,
        *,
        agent_delay: float = 0.0,
        log_level: str = "warning",
        database_url: str | None = None,
        extra_args: tuple[str, ...] = (),
        artifacts: Path | str | None = None,
        control: bool = True,
        start_timeout: float = START_TIMEOUT,
    ):
        self.workdir = workdir
        self.database_url = database_url or f"sqlite:///{workdir / 'server.sqlite3'}"
        self.artifacts = artifacts or workdir / "artifacts"
        self.log_path = workdir / "server.log"
        self.agent_delay = agent_delay
        self.log_level = log_level
        self.extra_args = extra_args
        self.control = control  # serve the control plane (`--public-only` runs without it)
        self.start_timeout = start_timeout  # for every start, restarts included
        self.port = 0
        self.url = ""
        self.starts = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._log: IO[bytes] | None = None
        atexit.register(self.kill_now)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    def check_alive(self) -> None:
        """Raise QaSetupError when the child died on its own (it is never stopped without
        being started again within the same operation)."""
        proc = self._proc
        if proc is not None and proc.returncode is not None:
            raise QaSetupError(
                f"the server exited unexpectedly (status {proc.returncode}): {self.log_tail()}"
            )

    def _args(self) -> list[str]:
        return [
            *server_command(),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            *(["--control"] if self.control else []),
            "--agent-delay",
            f"{self.agent_delay:g}",
            "--database",
            self.database_url,
            "--artifacts",
            str(self.artifacts),
            "--log-level",
            self.log_level,
            *self.extra_args,
        ]

    async def start(self, timeout: float | None = None) -> str:
        """Start the child and wait for its `listening on` line (at most `timeout`, by
        default the process's `start_timeout`); returns the base URL.

        A restart asks for the port of the first start; should it be taken at that moment,
        the start is retried a few times before giving up.
        """
        if timeout is None:
            timeout = self.start_timeout
        last_error = ""
        for _attempt in range(5):
            try:
                return await self._start_once(timeout)
            except QaSetupError as exc:
                last_error = str(exc)
                if not self.port:
                    raise
                log.info("server restart on port %d failed, retrying: %s", self.port, exc)
                await asyncio.sleep(0.2)
        raise QaSetupError(f"the server could not restart on port {self.port}: {last_error}")

    async def _start_once(self, timeout: float) -> str:
        if self.running:
            raise QaSetupError("the server is already running")
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self._log is None:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in `close`)
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        proc = await asyncio.create_subprocess_exec(
            *self._args(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self._proc = proc
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), timeout)
        except TimeoutError:
            await self.stop()
            tail = self.log_tail()
            raise QaSetupError(
                f"the harness's own server did not announce itself within {timeout:g} s "
                "(a loaded machine may need longer: raise --server-start-timeout); "
                f"its log is {self.log_path}" + (f": {tail}" if tail else "")
            ) from None
        text = line.decode("utf-8", "replace").strip()
        match = LISTENING.search(text)
        if match is None:
            await self.stop()
            tail = self.log_tail()
            raise QaSetupError(
                f"the harness's own server did not start ({text or 'no output'}); "
                f"its log is {self.log_path}" + (f": {tail}" if tail else "")
            )
        url = match.group(1).rstrip("/")
        port = int(url.rsplit(":", 1)[1])
        if self.port and port != self.port:
            await self.stop()
            raise QaSetupError(f"the server came back on port {port}, not {self.port}")
        self.port = port
        self.url = url
        self.starts += 1
        return url

    async def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM, wait for the exit (in-flight requests finish), SIGKILL after `timeout`."""
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                log.warning("the server ignored SIGTERM for %gs; killing it", timeout)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        self._proc = None
        return proc.returncode

    async def kill(self) -> None:
        """SIGKILL, as a crash: no shutdown code runs (its runs are failed by a survivor of
        the fleet, or by its own next start)."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        self._proc = None

    async def restart(self, down_for: float = 0.0) -> str:
        """Stop (for real), stay down `down_for` seconds, start again on the same database."""
        await self.stop()
        if down_for > 0:
            await asyncio.sleep(down_for)
        return await self.start()

    def kill_now(self) -> None:
        """Last resort (atexit): kill the child without the event loop."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        try:
            await self.stop()
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None
            atexit.unregister(self.kill_now)

    def log_errors(self) -> int | None:
        """ERROR/CRITICAL lines and tracebacks the child logged (None: no log to read)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return sum(
            1
            for line in text.splitlines()
            if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")
        )

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])

    async def __aenter__(self) -> ServerProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class ControlPlane:
    """The `/_stub` routes of CONTRACT §6 (no authentication; only with `--control`).

    Every request is tried up to `qa.public.ATTEMPTS` times, as a device's client tries its
    own: one that never left (refused, a connect timeout) whatever its method, one that may
    have arrived only when repeating it changes nothing. A run lasts minutes and restarts
    its server, so a single lost connection (the pooled one a restart killed, a refused
    connect on a loaded machine) must not end it. `transport` is the harness's own (it
    counts these requests with the devices' counter, `qa.device.CountingTransport`).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=url,
            timeout=timeout,
            transport=transport or httpx.AsyncHTTPTransport(verify=url.startswith("https:")),
            headers={"Content-Type": "application/json"},  # the stub takes JSON writes only
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(
        self, method: str, path: str, *, idempotent: bool = True, **kwargs: Any
    ) -> httpx.Response:
        """One request, retried on a transport error as the class says; the last error
        when every attempt failed."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return await self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if attempt == ATTEMPTS or not (idempotent or isinstance(exc, NOT_SENT)):
                    raise
                log.info("%s %s failed (%r); trying again", method, path, exc)
            await asyncio.sleep(backoff(attempt, 0.2, 2.0))
        raise AssertionError("unreachable")

    async def require(self) -> None:
        """Raise QaSetupError unless the server serves the control plane."""
        try:
            response = await self._send("POST", "/_stub/maintenance")
        except httpx.HTTPError as exc:
            raise QaSetupError(f"cannot reach the server: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise QaSetupError(
                "the server has no control plane (start it with --control): "
                f"POST /_stub/maintenance answered {response.status_code}"
            )

    async def probe(self) -> bool:
        """Whether the server serves the control plane (an answer to `POST
        /_stub/maintenance` with its `outbox_pending` count); QaSetupError when it cannot be
        reached at all. Any other answer (the plain 404 of a server without it) is False."""
        try:
            response = await self._send("POST", "/_stub/maintenance")
        except httpx.HTTPError as exc:
            raise QaSetupError(f"cannot reach the server: {type(exc).__name__}") from exc
        if response.status_code != 200:
            return False
        try:
            return isinstance(response.json().get("outbox_pending"), int)
        except (ValueError, AttributeError):
            return False

    async def create_history(
        self, token: str, text: str, *, updated_at: str | None = None, legacy: bool = False
    ) -> str:
        """A session with one user message and no run (`POST /_stub/sessions`); its id.
        Repeated only when the request never left: one that arrived made a session."""
        body: dict[str, Any] = {
            "token": token,
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            "legacy": legacy,
        }
        if updated_at is not None:
            body["updated_at"] = updated_at
        response = await self._send("POST", "/_stub/sessions", idempotent=False, json=body)
        response.raise_for_status()
        return str(response.json()["id"])

    async def object_store(self, up: bool) -> None:
        response = await self._send(
            "PUT", "/_stub/faults", json={"object_store": "up" if up else "down"}
        )
        response.raise_for_status()

    async def maintenance(self) -> int:
        """One maintenance pass (safe to repeat); the outbox rows still queued after it."""
        response = await self._send("POST", "/_stub/maintenance")
        response.raise_for_status()
        return int(response.json()["outbox_pending"])

    async def residue(self, session_id: str) -> dict[str, Any]:
        response = await self._send("GET", f"/_stub/sessions/{session_id}/residue")
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body
