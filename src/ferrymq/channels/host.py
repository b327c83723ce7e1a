"""What an agent needs of the driver that owns the engine (the server, or a test's).

The engine is synchronous and never waits for the disk: after its calls an agent asks
``done()`` for the LSN its effects need (the driver then has the committer write it and
wakes the getters those calls satisfied) and awaits ``durable(lsn)`` before it tells the
other end anything that depends on them.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ferrymq.engine.api import Delivery
from ferrymq.engine.qmgr import QueueManager
from ferrymq.tls.cipherspecs import CipherSpec
from ferrymq.tls.ocsp import Outcome


class ChannelKeys(Protocol):
    """The queue manager's TLS for its channels (the server's ``server.tls.ServerTLS``)."""

    def context(self) -> ssl.SSLContext:
        """The responding end's context (a receiver's listener). Raises: MQError."""

    def calling_context(self, spec: CipherSpec, label: str) -> ssl.SSLContext:
        """The calling end's (a sender's): ``label`` blank for the queue manager's CERTLABL.
        Raises: MQError."""

    async def revocation(self, agreed: ssl.SSLObject) -> Outcome | None:
        """The partner certificate's revocation status by OCSP (None: let it on)."""


class Listening(Protocol):
    """A listener that serves plain and TLS channels on one port (``server.listener``)."""

    async def start(self, host: str, port: int) -> int: ...

    def close(self) -> None: ...

    async def wait_closed(self) -> None: ...


ListenerFactory = Callable[[Callable[[float], asyncio.BaseProtocol], int, str], Listening]
"""(protocol factory, backlog, name) -> a listener not yet started."""


@dataclass(slots=True)
class EngineHost:
    """``when_durable(lsn, fn)`` runs ``fn`` once the journal is durable to ``lsn``;
    ``after_call()`` returns the LSN the last engine calls staged (0: none) after having
    it written and the waits it satisfied answered. ``keys`` and ``listen``: the queue
    manager's key repository and its listener kind, for channels over TLS."""

    qmgr: QueueManager
    when_durable: Callable[[int, Callable[[], None]], None]
    after_call: Callable[[], int]
    # TLS (docs/security.md): without these, channels with SSLCIPH cannot start and the
    # LISTENER objects serve plain channels only.
    keys: ChannelKeys | None = None
    listen: ListenerFactory | None = None
    # ``wait(waiter_id, answer)``: the driver hands the answer to an engine wait (MQGMO_WAIT)
    # to ``answer`` (the server's ``agent_wait``). Without it the initiator looks at its
    # initiation queue every POLL instead of waiting on it.
    wait: Callable[[int, Callable[[Delivery], None]], None] | None = None

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
