"""A persistent publication's data journaled once for all its copies (engine.message
record version 2, engine.staging): the copies deliver it, across restarts, paging, units of
work and XA, and its record goes with the last copy's, never before."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import Env
from test_engine_pubsub import publish, received, sub
from test_engine_pubsub_restart import DURABLE, RESUME, crash_restart

from ferrymq.engine.api import FakeClock, GetOptions
from ferrymq.engine.message import KIND_MESSAGE, KIND_MESSAGE_DATA, decode_message
from ferrymq.engine.paging import MemoryLimits
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

PERSISTENT = C.MQPER_PERSISTENT


@pytest.fixture
def env() -> Env:
    return Env()


def kinds(journal: MemoryJournal) -> list[int]:
    return sorted(r.kind for r in journal._live.values() if r is not None and r.kind in (KIND_MESSAGE, KIND_MESSAGE_DATA))


def durable_subs(env: Env, n: int, topic: str = "t") -> list[int]:
    """``n`` durable subscriptions, their handles closed (kept); their names S0 ..."""
    for i in range(n):
        s = sub(env, topic, DURABLE, sub_name=f"S{i}")
        env.qm.close(env.hconn, s.hsub)
    return list(range(n))


def resume(env: Env, i: int) -> int:
    return sub(env, "", RESUME, sub_name=f"S{i}").hobj


def test_the_data_is_journaled_once_and_goes_with_the_last_copy(env: Env) -> None:
    durable_subs(env, 3)
    publish(env, "t", b"once" * 100, persistence=PERSISTENT)
    assert isinstance(env.journal, MemoryJournal)
    assert kinds(env.journal) == [KIND_MESSAGE] * 3 + [KIND_MESSAGE_DATA]
    copies = [r for r in env.journal._live.values() if r is not None and r.kind == KIND_MESSAGE]
    assert all(len(r.payload) < 500 for r in copies)  # the data is not in them
    for i in range(3):
        assert [r.data for r in received(env, resume(env, i))] == [b"once" * 100]
        assert kinds(env.journal) == [KIND_MESSAGE] * (2 - i) + [KIND_MESSAGE_DATA] * (i < 2)
    assert env.qm.staging.shared == {}


def test_copies_survive_crashes_one_by_one(env: Env) -> None:
    durable_subs(env, 3)
    publish(env, "t", b"first", persistence=PERSISTENT)
    publish(env, "t", b"second", persistence=PERSISTENT)
    publish(env, "t", b"transient")
    for i in range(3):
        crash_restart(env)
        assert [r.data for r in received(env, resume(env, i))] == [b"first", b"second"]
    crash_restart(env)
    assert kinds(env.journal) == []


def test_a_got_copy_backed_out_keeps_the_data_and_a_commit_drops_it(env: Env) -> None:
    durable_subs(env, 2)
    publish(env, "t", b"uow", persistence=PERSISTENT)
    assert [r.data for r in received(env, resume(env, 0))] == [b"uow"]
    h1 = resume(env, 1)
    got = env.qm.get(env.hconn, h1, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100)
    assert got.data == b"uow"
    env.qm.backout(env.hconn)
    crash_restart(env)
    h1 = resume(env, 1)
    got = env.qm.get(env.hconn, h1, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100)
    assert (got.data, got.md.backout_count) == (b"uow", 1)
    assert kinds(env.journal) == [KIND_MESSAGE, KIND_MESSAGE_DATA]
    env.qm.commit(env.hconn)
    assert kinds(env.journal) == []


def test_a_publication_under_syncpoint_backed_out_leaves_nothing(env: Env) -> None:
    durable_subs(env, 2)
    publish(env, "t", b"never", pmo=C.MQPMO_SYNCPOINT, persistence=PERSISTENT)
    env.qm.backout(env.hconn)
    assert env.qm.staging.shared == {}
    publish(env, "t", b"kept", pmo=C.MQPMO_SYNCPOINT, persistence=PERSISTENT)
    env.qm.commit(env.hconn)
    crash_restart(env)
    assert [[r.data for r in received(env, resume(env, i))] for i in range(2)] == [[b"kept"], [b"kept"]]


def test_a_data_record_no_copy_names_is_deleted_at_restart(env: Env) -> None:
    durable_subs(env, 2)
    publish(env, "t", b"x", persistence=PERSISTENT)
    # A crash between the last copy's delete and its data record's (both immediate).
    msgs = [m for q in env.qm.objects.queues.values() for m in q.messages.by_seq.values()]
    for m in msgs:
        env.journal.delete(m.record_id)
    crash_restart(env)
    assert kinds(env.journal) == []


def test_a_copy_whose_data_record_is_missing_is_left_unread(env: Env) -> None:
    durable_subs(env, 2)
    publish(env, "t", b"x", persistence=PERSISTENT)
    data = next(rid for rid, r in env.journal._live.items() if r is not None and r.kind == KIND_MESSAGE_DATA)
    env.journal.delete(data)
    crash_restart(env)
    assert received(env, resume(env, 0)) == []


def test_record_version_2_decoding_is_bounded() -> None:
    env = Env()
    durable_subs(env, 2)
    publish(env, "t", b"x", persistence=PERSISTENT)
    rec = next(r for r in env.journal._live.values() if r is not None and r.kind == KIND_MESSAGE)
    assert decode_message(rec.payload, {}).data_record
    for bad in (rec.payload[:-1], rec.payload + b"\0", rec.payload[:-8] + bytes(8)):
        with pytest.raises(DecodeError):
            decode_message(bad, {})


def test_paged_out_copies_read_their_data_back(tmp_path: Path) -> None:
    clock = FakeClock()
    limits = MemoryLimits(persistent_bytes=4096, read_cache_bytes=0)
    journal = FileJournal(tmp_path / "j", segment_size=64 * 1024)
    env = Env()
    env.journal, env.clock = journal, clock
    env.qm = QueueManager.start("QM1", journal, clock, limits)
    env.hconn = env.qm.connect(user="tester")
    durable_subs(env, 3)
    bodies = [bytes([i]) * 1000 for i in range(20)]
    for b in bodies:
        publish(env, "t", b, persistence=PERSISTENT)
        journal.sync()
        env.qm.pager.settle()
    assert env.qm.pager.paged > 0
    assert [r.data for r in received(env, resume(env, 0))] == bodies
    journal.close()
    journal = FileJournal(tmp_path / "j", segment_size=64 * 1024)
    env.journal = journal
    env.qm = QueueManager.start("QM1", journal, clock, limits)  # data records beyond the budget not loaded
    env.hconn = env.qm.connect(user="tester")
    held = [m for q in env.qm.objects.queues.values() for m in q.messages.by_seq.values()]
    assert all(m.data_record for m in held) and any(m.paged_out for m in held)
    for i in (1, 2):
        assert [r.data for r in received(env, resume(env, i))] == bodies
    journal.sync()
    assert env.qm.staging.shared == {}
    journal.close()


def test_the_data_stays_while_a_got_copy_may_still_be_backed_out(env: Env) -> None:
    durable_subs(env, 3)
    publish(env, "t", b"held", persistence=PERSISTENT)
    conns = [env.qm.connect(user="tester") for _ in range(3)]
    syncpoint = GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT)
    for i, c in enumerate(conns):
        h = sub(env, "", RESUME, hconn=c, sub_name=f"S{i}").hobj
        assert env.qm.get(c, h, MQMD(), syncpoint, 100).data == b"held"
    env.qm.commit(conns[2])
    env.qm.commit(conns[1])  # the last get made final is not the last one taken
    env.qm.backout(conns[0])
    crash_restart(env)
    assert [r.data for r in received(env, resume(env, 0))] == [b"held"]
    assert kinds(env.journal) == []


@pytest.mark.parametrize("commit", [True, False])
def test_prepared_units_across_a_restart(env: Env, commit: bool) -> None:
    durable_subs(env, 2)
    xid_pub, xid_get = b"pub-xid", b"get-xid"
    publish(env, "t", b"first", persistence=PERSISTENT)
    getter = env.qm.connect(user="tester")
    h = sub(env, "", RESUME, hconn=getter, sub_name="S0").hobj
    assert env.qm.get(getter, h, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100).data == b"first"
    env.qm.prepare(getter, xid_get)
    publish(env, "t", b"second", pmo=C.MQPMO_SYNCPOINT, persistence=PERSISTENT)
    env.qm.prepare(env.hconn, xid_pub)
    crash_restart(env)
    assert env.qm.resolve(env.hconn, xid_get, commit)
    assert env.qm.resolve(env.hconn, xid_pub, commit)
    crash_restart(env)
    assert [r.data for r in received(env, resume(env, 0))] == ([b"second"] if commit else [b"first"])
    assert [r.data for r in received(env, resume(env, 1))] == ([b"first", b"second"] if commit else [b"first"])
    assert kinds(env.journal) == []


class CountingJournal(MemoryJournal):
    """A MemoryJournal that counts the calls that append records, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def add(self, *args: object, **kw: object) -> int:
        self._count("add")
        return super().add(*args, **kw)  # type: ignore[arg-type]

    def add_run(self, *args: object, **kw: object) -> int:
        self._count("add_run")
        return super().add_run(*args, **kw)  # type: ignore[arg-type]

    def delete(self, *args: object, **kw: object) -> int:
        self._count("delete")
        return super().delete(*args, **kw)  # type: ignore[arg-type]

    def delete_run(self, *args: object, **kw: object) -> int:
        self._count("delete_run")
        return super().delete_run(*args, **kw)  # type: ignore[arg-type]


def test_copies_and_a_units_gets_are_journaled_a_run_at_a_time() -> None:
    # A publication's copies are staged with one call (beside their data record); a
    # unit's gets stage their deletes with one call when it commits, and the data records
    # their last copies leave go with one more. What is journaled is what it was.
    env = Env()
    env.journal = journal = CountingJournal()
    env.qm = QueueManager.start("QM1", journal, env.clock)
    env.hconn = env.qm.connect()
    durable_subs(env, 3)
    texts = (b"zero", b"one", b"two")
    publish(env, "t", texts[0], persistence=PERSISTENT)  # the queues' first: their sequence blocks
    journal.calls.clear()
    for text in texts[1:]:
        publish(env, "t", text, persistence=PERSISTENT)
    assert journal.calls == {"add": 2, "add_run": 2}
    assert kinds(journal) == [KIND_MESSAGE] * 9 + [KIND_MESSAGE_DATA] * 3
    handles = [resume(env, i) for i in range(3)]
    journal.calls.clear()
    for h in handles[:2]:
        for text in texts:
            got = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100)
            assert got.data == text
    assert journal.calls == {}  # nothing staged until the unit settles
    env.qm.commit(env.hconn)
    assert journal.calls == {"delete_run": 1}  # the third copies keep the data records
    assert kinds(journal) == [KIND_MESSAGE] * 3 + [KIND_MESSAGE_DATA] * 3
    for text in texts:
        got = env.qm.get(env.hconn, handles[2], MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100)
        assert got.data == text
    journal.calls.clear()
    env.qm.commit(env.hconn)
    assert journal.calls == {"delete_run": 2}  # the copies' records, then both data records
    assert kinds(journal) == []
    assert env.qm.staging.shared == {}


def test_a_unit_of_gets_backed_out_journals_nothing_and_keeps_every_record(env: Env) -> None:
    durable_subs(env, 1)
    publish(env, "t", b"kept", persistence=PERSISTENT)
    h = resume(env, 0)
    assert isinstance(env.journal, MemoryJournal)
    lsn = env.journal.appended_lsn
    got = env.qm.get(env.hconn, h, MQMD(), GetOptions(C.MQGMO_NO_WAIT | C.MQGMO_SYNCPOINT), 100)
    assert got.data == b"kept"
    env.qm.backout(env.hconn)
    assert env.journal.appended_lsn == lsn + 1  # the BackoutCount's update alone
    crash_restart(env)
    assert [(r.data, r.md.backout_count) for r in received(env, resume(env, 0))] == [(b"kept", 1)]
