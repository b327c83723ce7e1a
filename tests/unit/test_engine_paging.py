"""Deep queues (engine/paging.py): persistent messages beyond the memory budget are paged out
to the journal and read back by get and browse, intact and in order, across backout,
compaction and restart; non-persistent messages beyond theirs are refused with 2056."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ferrymq.engine.api import FakeClock, GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.paging import MemoryLimits
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Journal
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

BODY = 1000
PERSISTENT = C.MQPER_PERSISTENT
OPEN = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT | C.MQOO_BROWSE


def body(i: int) -> bytes:
    return (b"%06d" % i) * (BODY // 6) + bytes(BODY % 6)


class Rig:
    def __init__(self, kind: str, tmp: Path, limits: MemoryLimits) -> None:
        self.kind, self.tmp, self.limits = kind, tmp, limits
        self.clock = FakeClock()
        self.journal: Journal = MemoryJournal() if kind == "memory" else FileJournal(tmp / "j", segment_size=64 * 1024)
        self.start()

    def start(self) -> None:
        self.qm = QueueManager.start("QM1", self.journal, self.clock, self.limits)
        self.hconn = self.qm.connect()
        if self.qm.objects.find("DEEP") is None:
            self.qm.objects.define("QLOCAL", "DEEP", {"MAXDEPTH": 100000})
        self.hobj = self.qm.open(self.hconn, ObjectDescriptor(object_name="DEEP"), OPEN).hobj
        self.settle()

    def restart(self) -> None:
        self.journal.close()
        if isinstance(self.journal, MemoryJournal):
            self.journal = self.journal.crash()
        else:
            self.journal = FileJournal(self.tmp / "j", segment_size=64 * 1024)
        self.start()

    def settle(self) -> None:
        self.journal.sync()
        self.qm.pager.settle()

    def put(self, data: bytes, persistence: int = PERSISTENT, pmo: int = 0, **md: object) -> None:
        self.qm.put(self.hconn, self.hobj, MQMD(persistence=persistence, **md), PutOptions(pmo), data)  # type: ignore[arg-type]

    def get(self, options: int = C.MQGMO_NO_WAIT) -> GetResult:
        res = self.qm.get(self.hconn, self.hobj, MQMD(), GetOptions(options, 0, 0), 1 << 20)
        assert isinstance(res, GetResult)
        return res

    @property
    def held(self) -> int:
        return self.qm.pager.meter.persistent

    def paged(self) -> int:
        return sum(m.paged_out for m in self.qm.objects.require("DEEP").messages.by_seq.values())


@pytest.fixture(params=["memory", "file"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    r = Rig(request.param, tmp_path, MemoryLimits(persistent_bytes=10 * BODY, read_cache_bytes=2 * BODY))
    yield r
    r.journal.close()


def fill(rig: Rig, n: int) -> None:
    for i in range(n):
        rig.put(body(i))
        if i % 7 == 6:
            rig.settle()
    rig.settle()


def test_messages_beyond_the_budget_are_paged_out_and_come_back_in_order(rig: Rig) -> None:
    fill(rig, 60)
    assert rig.paged() >= 45  # the head stays in memory, the rest waits on disk
    assert rig.held <= 10 * BODY + 7 * BODY
    browsed = [rig.get(C.MQGMO_BROWSE_FIRST if i == 0 else C.MQGMO_BROWSE_NEXT) for i in range(60)]
    assert [r.data for r in browsed] == [body(i) for i in range(60)]
    assert rig.paged() >= 45  # a browse reads back without taking the message into memory
    got = [rig.get() for _ in range(60)]
    assert [r.data for r in got] == [body(i) for i in range(60)]
    assert [r.data_length for r in got] == [BODY] * 60
    assert all(r.md.persistence == PERSISTENT and r.md.msg_id == b.md.msg_id for r, b in zip(got, browsed, strict=True))
    assert rig.held == 0 and rig.qm.pager.reads >= 45
    with pytest.raises(MQError) as exc:
        rig.get()
    assert exc.value.reason == C.MQRC_NO_MSG_AVAILABLE


def test_a_backed_out_paged_message_returns_whole_with_its_backout_count(rig: Rig) -> None:
    fill(rig, 30)
    for _ in range(20):  # the last one got is paged out
        rig.get()
    r = rig.get(C.MQGMO_SYNCPOINT)
    assert r.data == body(20)
    rig.qm.backout(rig.hconn)
    rig.settle()
    again = rig.get()
    assert (again.data, again.md.backout_count) == (body(20), 1)
    assert [rig.get().data for _ in range(9)] == [body(i) for i in range(21, 30)]


def test_restart_loads_only_heads_beyond_the_budget(rig: Rig) -> None:
    fill(rig, 50)
    rig.qm.put(rig.hconn, rig.hobj, MQMD(persistence=PERSISTENT), PutOptions(0), body(50), {"colour": "blue"})
    rig.restart()
    assert rig.paged() >= 35 and rig.held <= 10 * BODY
    assert [rig.get().data for _ in range(50)] == [body(i) for i in range(50)]
    gmo = GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_PROPERTIES_IN_HANDLE, 0, 0, msg_handle=True)
    last = rig.qm.get(rig.hconn, rig.hobj, MQMD(), gmo, 1 << 20)
    assert isinstance(last, GetResult) and last.data == body(50)
    assert last.properties is not None and dict(last.properties.items())["colour"] == "blue"
    assert rig.held == 0


def test_reads_follow_compaction(tmp_path: Path) -> None:
    r = Rig("file", tmp_path, MemoryLimits(persistent_bytes=5 * BODY, read_cache_bytes=BODY))
    try:
        fill(r, 200)
        for i in range(100):
            assert r.get().data == body(i)
        r.settle()
        assert isinstance(r.journal, FileJournal)
        r.journal.compact()
        assert r.journal.stats().compactions
        browsed = [r.get(C.MQGMO_BROWSE_FIRST if i == 0 else C.MQGMO_BROWSE_NEXT).data for i in range(100)]
        assert browsed == [body(i) for i in range(100, 200)]
        r.restart()
        assert [r.get().data for _ in range(100)] == [body(i) for i in range(100, 200)]
    finally:
        r.journal.close()


def test_expired_paged_message_gives_its_report_with_data(rig: Rig) -> None:
    rig.qm.objects.define("QLOCAL", "REPLY", {})
    fill(rig, 20)
    rig.put(b"short-lived" * 100, expiry=10, report=C.MQRO_EXPIRATION_WITH_FULL_DATA, reply_to_q="REPLY")
    fill(rig, 20)
    assert rig.paged() >= 20
    rig.clock.advance(5.0)
    rig.qm.tick()
    rig.settle()
    reply = rig.qm.open(rig.hconn, ObjectDescriptor(object_name="REPLY"), C.MQOO_INPUT_AS_Q_DEF).hobj
    res = rig.qm.get(rig.hconn, reply, MQMD(), GetOptions(C.MQGMO_NO_WAIT, 0, 0), 1 << 20)
    assert isinstance(res, GetResult) and res.data == b"short-lived" * 100
    assert res.md.feedback == C.MQFB_EXPIRATION


def test_non_persistent_messages_beyond_their_budget_are_refused_with_2056(tmp_path: Path) -> None:
    r = Rig("memory", tmp_path, MemoryLimits(non_persistent_bytes=3 * BODY))
    for i in range(3):
        r.put(body(i), C.MQPER_NOT_PERSISTENT)
    with pytest.raises(MQError) as exc:
        r.put(body(3), C.MQPER_NOT_PERSISTENT)
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_Q_SPACE_NOT_AVAILABLE)
    assert "non-persistent memory limit (3000 bytes)" in str(exc.value)
    r.put(body(3), PERSISTENT)  # persistent messages are paged, not refused
    many = r.qm.put_many(r.hconn, r.hobj, MQMD(persistence=C.MQPER_NOT_PERSISTENT), PutOptions(0), [(b"", b"y")])
    assert many[0] is not None and many[0].reason == C.MQRC_Q_SPACE_NOT_AVAILABLE
    assert r.get().data == body(0)
    r.put(body(4), C.MQPER_NOT_PERSISTENT)  # room again
    assert [r.get().data for _ in range(4)] == [body(1), body(2), body(3), body(4)]
    assert r.qm.pager.meter.transient == 0


def test_a_paged_message_that_cannot_be_read_back_fails_the_get_with_2101_and_stays(tmp_path: Path) -> None:
    r = Rig("file", tmp_path, MemoryLimits(persistent_bytes=0, read_cache_bytes=1))
    try:
        r.put(b"damaged on disk" * 10)
        r.put(b"intact")
        r.settle()
        assert r.paged() == 2
        for seg in (tmp_path / "j").glob("*.seg"):
            data = bytearray(seg.read_bytes())
            at = data.find(b"damaged on disk")
            if at >= 0:
                data[at] ^= 0x01
                seg.write_bytes(bytes(data))
        with pytest.raises(MQError) as exc:
            r.get()
        assert (exc.value.reason, r.qm.objects.require("DEEP").messages.depth) == (C.MQRC_OBJECT_DAMAGED, 2)
        assert "cannot be read back" in str(exc.value)
    finally:
        r.journal.close()


def test_the_pager_is_behind_while_too_much_waits_for_the_disk(tmp_path: Path) -> None:
    r = Rig("memory", tmp_path, MemoryLimits(persistent_bytes=2 * BODY, unsynced_bytes=5 * BODY))
    for i in range(7):
        r.put(body(i))
    r.qm.pager.settle()
    assert not r.qm.pager.behind  # five over the budget wait: at the limit, not above it
    r.put(body(7))
    r.qm.pager.settle()
    assert r.qm.pager.behind and r.qm.pager.waiting_bytes == 6 * BODY
    r.settle()
    assert not r.qm.pager.behind and r.qm.pager.waiting_bytes == 0 and r.paged() == 6
