"""The asyncio event loop that runs on Qt's event loop, with async-generator hooks.

qasync 0.28 does not install `sys.set_asyncgen_hooks` the way
`asyncio.BaseEventLoop.run_forever` does. Without them, an `async for` over an httpx or
httpx-sse stream that is left early hands its generators to the garbage collector outside
the loop ("async generator ignored GeneratorExit") and the HTTP connection is never closed,
so the server never sees the disconnect (PITFALLS §2). This subclass installs the hooks
for the duration of `run_forever` and restores the previous ones afterwards. Use it in the
application and in the tests.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import qasync


class ConvergeEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """`qasync.QEventLoop` that finalises async generators on the loop."""

    def run_forever(self) -> Any:
        old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*old_hooks)

    async def drain_async_generators(self) -> None:
        """Close every async generator still alive (the loop's own `shutdown_asyncgens`)."""
        await self.shutdown_asyncgens()


def install(loop: ConvergeEventLoop) -> None:
    """Make `loop` the current thread's event loop."""
    asyncio.set_event_loop(loop)
