"""L4: bindings mode — a queue manager embedded in the application's process.

``EmbeddedQueueManager`` runs the engine and its ``QueueManagerServer`` on an event loop
in a background thread (engine calls stay on one thread) and connects clients to it
through socket pairs: no TCP, no port, the same protocol and the same client API as
client mode. It can also listen on TCP at the same time (``listen=True``).

This glue lives here because ``ferrymq.client`` must not import the engine or server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from types import TracebackType
from typing import Any, TypeVar

from ferrymq.admin.session import Result, Session
from ferrymq.client import AsyncClient, Client
from ferrymq.engine.api import Clock, SystemClock
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.engine.qmgr import QueueManager
from ferrymq.server import QueueManagerServer, eventloop
from ferrymq.store.journal import Journal

T = TypeVar("T")


class EmbeddedQueueManager:
    """A running queue manager in this process; ``connect()`` gives clients to it."""

    def __init__(self, name: str, journal: Journal, *, clock: Clock | None = None, listen: bool = False,
                 host: str = "127.0.0.1", port: int = 0, event_loop: str = "auto", **server_options: Any) -> None:
        """``event_loop``: "auto" (uvloop when installed), "uvloop" or "asyncio" (see
        ferrymq.server.eventloop); ValueError when it is not available."""
        self.name = name
        self._journal = journal
        self._clock = clock or SystemClock()
        self._listen = listen
        self._host, self._port = host, port
        self._server_options = server_options
        self._loop = eventloop.loop_factory(event_loop)()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"ferrymq-{name}", daemon=True)
        self.qmgr: QueueManager | None = None
        self.server: QueueManagerServer | None = None

    def start(self) -> EmbeddedQueueManager:
        """Replay the journal and start serving. Returns self."""
        self._thread.start()
        self.run(self._start_sync)
        self._submit(self._start_async()).result()
        return self

    def _start_sync(self) -> None:
        self.qmgr = QueueManager.start(self.name, self._journal, self._clock)
        self.server = QueueManagerServer(self.qmgr, self._host, self._port, **self._server_options)

    async def _start_async(self) -> None:
        assert self.server is not None
        await self.server.start(listen=self._listen)

    @property
    def port(self) -> int:
        """The TCP port when listening (useful with port 0)."""
        assert self.server is not None
        return self.server.port

    def _submit(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the queue manager's thread (the engine is not thread-safe)."""
        async def call() -> T:
            return fn()

        result: T = self._submit(call()).result()
        return result

    def connect(self, **options: Any) -> Client:
        """A blocking client connected in bindings mode (keywords as ``Client``)."""
        assert self.server is not None
        sock = self._submit(self.server.connect_local()).result()
        return Client(sock, qmgr=self.name, **options)

    async def connect_async(self, **options: Any) -> AsyncClient:
        """An asyncio client (on the caller's loop) connected in bindings mode."""
        assert self.server is not None
        sock = await asyncio.wrap_future(self._submit(self.server.connect_local()))
        return await AsyncClient.from_socket(sock, qmgr=self.name, **options)

    def mqsc(self, *commands: str) -> list[Result]:
        """Run MQSC commands directly on the engine (no PCF round trip), as runmqsc does
        locally: ``qm.mqsc("DEFINE QLOCAL(APP.IN) MAXDEPTH(100)")``. Each Result has the
        runmqsc messages, the displayed objects, ``ok`` and the reason of a failure."""
        qmgr = self.qmgr
        assert qmgr is not None
        session = Session(lambda cmd: self.run(lambda: run_command(qmgr, cmd)))
        return list(session.script(commands))

    def stop(self, quiesce: bool = False, timeout: float = 10.0) -> None:
        """Stop serving (see ``QueueManagerServer.stop``) and end the thread."""
        if self.server is not None and self._thread.is_alive():
            self._submit(self.server.stop(quiesce=quiesce, timeout=timeout)).result()
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()

    def __enter__(self) -> EmbeddedQueueManager:
        return self.start() if not self._thread.is_alive() else self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def embed(name: str, journal: Journal, **options: Any) -> EmbeddedQueueManager:
    """Start an embedded queue manager: ``with embed("QM1", journal) as qm: c = qm.connect()``."""
    return EmbeddedQueueManager(name, journal, **options).start()
