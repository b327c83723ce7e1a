"""Fixtures for server/client integration tests: a real engine, a journal, a server on 127.0.0.1 port 0."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

import pytest
import qm_process  # noqa: F401  (sets the tests' credentials in the environment: docs/security.md)

import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import StoreError
from ferrymq.server import QueueManagerServer
from ferrymq.store.journal import Content, JournalStats, LoadResult, Pending, Trim
from ferrymq.store.memory import MemoryJournal


class SlowJournal:
    """The journal contract in memory, with an fdatasync that takes ``delay`` seconds.

    It counts syncs and records the LSN that was durable at each point, so tests can
    check that a reply never left before its record was synced.
    """

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self._appended = 0
        self._taken = 0
        self._durable = 0
        self.syncs = 0
        self.refusal = ""

    def load(self, trim: Trim | None = None) -> LoadResult:
        return LoadResult([], [])

    def read(self, record_id: int) -> bytes:
        raise StoreError("SlowJournal keeps no payloads")

    def size(self, record_id: int) -> int:
        raise StoreError("SlowJournal keeps no payloads")

    def _op(self) -> int:
        self._appended += 1
        return self._appended

    def add(self, record_id: int, kind: int, payload: bytes, txid: int = 0) -> int:
        return self._op()

    def stats(self) -> JournalStats:
        return JournalStats(self._appended, self._durable, 0, 0, 0, fdatasyncs=self.syncs)

    def add_run(self, kind: int, items: Sequence[tuple[int, Content]], txid: int = 0) -> int:
        lsn = 0
        for _ in items:
            lsn = self._op()
        return lsn

    def update(self, record_id: int, kind: int, payload: bytes, txid: int = 0) -> int:
        return self._op()

    def delete(self, record_id: int, txid: int = 0) -> int:
        return self._op()

    def delete_run(self, record_ids: Sequence[int], txid: int = 0) -> int:
        lsn = self._appended
        for _ in record_ids:
            lsn = self._op()
        return lsn

    def prepare(self, txid: int, xid: bytes) -> int:
        return self._op()

    def commit(self, txid: int) -> int:
        return self._op()

    def rollback(self, txid: int) -> int:
        return self._op()

    @property
    def appended_lsn(self) -> int:
        return self._appended

    @property
    def durable_lsn(self) -> int:
        return self._durable

    def take_pending(self) -> Pending | None:
        if self._appended == self._taken:
            return None
        self._taken = self._appended
        return Pending((), self._taken)

    def write_pending(self, pending: Pending) -> None:
        if self.delay:
            time.sleep(self.delay)
        self.syncs += 1

    def mark_durable(self, lsn: int) -> None:
        self._durable = max(self._durable, lsn)

    def refresh(self) -> None:
        pass

    def check_space(self) -> None:
        pass

    def sync(self) -> None:
        p = self.take_pending()
        if p is not None:
            self.write_pending(p)
            self.mark_durable(p.lsn)

    def close(self) -> None:
        pass


def new_journal() -> MemoryJournal:
    return MemoryJournal()


QUEUES = ("Q1", "Q2", "Q3", "REPLY")


def define_queues(qm: QueueManager) -> None:
    for name in QUEUES:
        if qm.objects.find(name) is None:  # a replayed journal already has them
            qm.objects.define("QLOCAL", name)


@pytest.fixture
async def server() -> AsyncIterator[QueueManagerServer]:
    qm = QueueManager.start("QM1", new_journal(), SystemClock())
    define_queues(qm)
    srv = QueueManagerServer(qm, "127.0.0.1", 0, heartbeat=1.0, tick_interval=0.2)
    await srv.start()
    yield srv
    await srv.stop(quiesce=False)


@pytest.fixture
async def make_server() -> AsyncIterator[Callable[[Any], Awaitable[QueueManagerServer]]]:
    """A factory: a started server over the given journal (stopped at the end of the test)."""
    started: list[QueueManagerServer] = []

    async def make(journal: Any) -> QueueManagerServer:
        qm = QueueManager.start("QM1", journal, SystemClock())
        define_queues(qm)
        srv = QueueManagerServer(qm, "127.0.0.1", 0)
        await srv.start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        await srv.stop(quiesce=False)


@pytest.fixture
def slow_journal() -> type[SlowJournal]:
    return SlowJournal


@pytest.fixture
def embedded() -> Iterator[EmbeddedQueueManager]:
    """A queue manager on a background thread, listening on 127.0.0.1 port 0 too."""
    emb = EmbeddedQueueManager("QM1", new_journal(), listen=True, port=0, heartbeat=1.0, tick_interval=0.2)
    emb.start()
    emb.run(lambda: define_queues(emb.qmgr))  # type: ignore[arg-type]
    yield emb
    emb.stop()


@pytest.fixture
def pymqi_admin(embedded: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    """A ferrymq.pymqi connection to ``embedded`` through DEV.ADMIN.SVRCONN, as a pymqi
    administration or monitoring program makes one."""
    qm = pymqi.connect("QM1", "DEV.ADMIN.SVRCONN", f"127.0.0.1({embedded.port})")
    yield qm
    if qm.is_connected:
        qm.disconnect()
