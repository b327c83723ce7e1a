"""What an agent needs of the driver that owns the engine (the server, or a test's).

The engine is synchronous and never waits for the disk: after its calls an agent asks
``done()`` for the LSN its effects need (the driver then has the committer write it and
wakes the getters those calls satisfied) and awaits ``durable(lsn)`` before it tells the
other end anything that depends on them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from ferrymq.engine.qmgr import QueueManager


@dataclass(slots=True)
class EngineHost:
    """``when_durable(lsn, fn)`` runs ``fn`` once the journal is durable to ``lsn``;
    ``after_call()`` returns the LSN the last engine calls staged (0: none) after having
    it written and the waits it satisfied answered."""

    qmgr: QueueManager
    when_durable: Callable[[int, Callable[[], None]], None]
    after_call: Callable[[], int]

    def done(self) -> int:
        return self.after_call()

    async def durable(self, lsn: int) -> None:
        if not lsn:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def release() -> None:
            if not fut.done():
                fut.set_result(None)

        self.when_durable(lsn, release)
        await fut
