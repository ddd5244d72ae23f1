"""`python -m qa.worker`: one worker process of `converge qa --workers N` (decision 0214).

It runs a `qa.fleet.LocalFleet` of the devices the coordinator gives it, on its own event
loop and interpreter, and answers the coordinator's calls: one JSON object per line on
stdin (`{"id": 7, "call": "delete", "args": {...}}`), one per line on stdout
(`{"id": 7, "result": ...}` or `{"id": 7, "error": "..."}`); logs go to stderr. Calls run
concurrently (a sample of all devices while a delete waits); the answers carry the times
measured here, on `time.monotonic()` (`qa.workers` says why one clock). End of input closes
the devices and ends the process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from dataclasses import asdict
from typing import Any

from qa.fleet import (
    DeviceSpec,
    LocalFleet,
    observation_to_json,
    rows_to_json,
)

log = logging.getLogger(__name__)

LINE_LIMIT = 1 << 28  # the longest line either side reads (all observations in one answer)


class Worker:
    def __init__(self) -> None:
        self.fleet = LocalFleet()
        self.closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        f = self.fleet
        if name == "hello":
            return {"now": time.monotonic(), "pid": os.getpid(), "platform": sys.platform}
        if name == "open":
            await f.open([DeviceSpec(**spec) for spec in args["specs"]])
            return None
        if name == "send":
            sent = await f.send(args["index"], args["session_id"], args["text"])
            return {**asdict(sent), "status": sent.status.value}
        if name == "delete":
            done = await f.delete(args["index"], args["session_id"], stop_run=args["stop_run"])
            return {**asdict(done), "status": done.status.value}
        if name in ("reconcile", "trigger", "reopen"):
            await getattr(f, name)(args["index"])
            return None
        if name == "sample":
            rows = await f.sample(set(args["watched"]))
            return {str(i): rows_to_json(r) for i, r in rows.items()}
        if name == "stop_timers":
            await f.stop_timers()
            return None
        if name == "observations":
            return [observation_to_json(o) for o in await f.observations()]
        if name == "close":
            self.closed = True
            return (await f.close()).to_json()
        raise ValueError(f"unknown call {name!r}")

    async def answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"id": message["id"]}
        try:
            reply["result"] = await self.call(message["call"], message.get("args", {}))
        except Exception as exc:
            log.exception("call %s failed", message.get("call"))
            reply["error"] = f"{type(exc).__name__}: {exc}"
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
        try:
            while line := await reader.readline():
                task = loop.create_task(self.answer(json.loads(line)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            if not self.closed:
                await self.fleet.close()
        finally:
            transport.close()


def main() -> None:
    logging.basicConfig(
        level=os.environ.get("CONVERGE_QA_WORKER_LOG", "ERROR"),
        stream=sys.stderr,
        format="%(levelname)s worker %(process)d %(name)s: %(message)s",
    )
    asyncio.run(Worker().serve())


if __name__ == "__main__":
    main()
