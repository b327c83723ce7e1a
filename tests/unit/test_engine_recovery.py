"""Restart from the journal: definitions, order, BackoutCount, sequence numbers, units of work."""

from __future__ import annotations

import logging

import pytest
from engine_helpers import Env

from ferrymq.engine.api import FakeClock, ObjectDescriptor, PutOptions
from ferrymq.engine.objects import KIND_OBJECT, KIND_QMGR, KIND_SEQUENCE
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD


def restart(env: Env, *, crash: bool = False) -> None:
    """Restart the engine on what the journal kept (only the durable part after a crash)."""
    if not crash:
        env.journal.sync()
    env.journal = env.journal.crash()
    env.qm = QueueManager.start("QM1", env.journal, env.clock)
    env.hconn = env.qm.connect()


def drain(env: Env, name: str) -> list[tuple[bytes, int]]:
    h = env.open(name)
    return [(r.data, r.md.backout_count) for r in (env.get(h) for _ in range(env.depth(name)))]


def test_definitions_and_persistent_messages_survive_in_order(env: Env) -> None:
    env.define("Q1", MAXDEPTH=42, DESCR="kept", MSGDLVSQ="FIFO")
    env.qm.objects.alter_qmgr({"MAXUMSGS": 55})
    h = env.open("Q1")
    for data, prio, pers in [(b"a", 5, 1), (b"b", 9, 0), (b"c", 1, 1), (b"d", 9, 1)]:
        env.put(h, data, priority=prio, persistence=pers)
    restart(env)
    q = env.qm.objects.require("Q1")
    assert (q["MAXDEPTH"], q["DESCR"], q.fifo) == (42, "kept", True)
    assert env.qm.objects.qmgr["MAXUMSGS"] == 55
    assert drain(env, "Q1") == [(b"a", 0), (b"c", 0), (b"d", 0)]


def test_priority_order_rebuilt(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    for data, prio in [(b"a", 1), (b"b", 7), (b"c", 1), (b"d", 7)]:
        env.put(h, data, priority=prio, persistence=1)
    restart(env)
    assert [d for d, _ in drain(env, "Q1")] == [b"b", b"d", b"a", b"c"]


def test_backout_count_survives_restart(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"x", persistence=1)
    for _ in range(2):
        env.get(h, C.MQGMO_SYNCPOINT)
        env.qm.backout(env.hconn)
    restart(env)
    assert drain(env, "Q1") == [(b"x", 2)]


def test_uncommitted_work_rolled_back_at_restart(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"committed", persistence=1)
    env.put(h, b"in-flight", persistence=1, pmo=C.MQPMO_SYNCPOINT)
    env.get(h, C.MQGMO_SYNCPOINT)  # takes "committed" inside the same open unit of work
    restart(env)
    assert drain(env, "Q1") == [(b"committed", 0)]


def test_committed_get_not_redelivered(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"once", persistence=1)
    env.get(h, C.MQGMO_SYNCPOINT)
    env.qm.commit(env.hconn)
    assert env.qm.take_sync_lsn() > 0  # the commit must be durable before it is acknowledged
    restart(env)
    assert drain(env, "Q1") == []


def test_acknowledged_only_when_durable(env: Env) -> None:
    env.define("Q1")
    env.journal.sync()
    h = env.open("Q1")
    env.put(h, b"unsynced", persistence=1)
    lsn = env.qm.take_sync_lsn()
    assert lsn > env.journal.durable_lsn  # a driver must wait for this before replying
    restart(env, crash=True)
    assert drain(env, "Q1") == []


def test_non_persistent_and_temporary_queues_gone(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"np", persistence=0)
    dyn = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DEFAULT.MODEL.QUEUE", dynamic_q_name="T.*"),
                      C.MQOO_INPUT_EXCLUSIVE).object_name
    perm = env.qm.open(env.hconn, ObjectDescriptor("SYSTEM.DURABLE.MODEL.QUEUE", dynamic_q_name="P.*"),
                       C.MQOO_INPUT_EXCLUSIVE).object_name
    restart(env)
    assert env.depth("Q1") == 0
    assert env.qm.objects.find(dyn) is None
    assert env.qm.objects.find(perm) is not None


def test_sequence_numbers_never_reused_after_restart(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    seqs = [env.put(h, persistence=0).sequence for _ in range(3)]
    env.get(h)
    restart(env)
    h = env.open("Q1")
    after = env.put(h).sequence
    assert after > max(seqs)


def test_deleted_queue_stays_deleted(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.put(h, persistence=1)
    env.qm.close(env.hconn, h)
    env.qm.objects.delete("Q1", purge=True)
    restart(env)
    assert env.qm.objects.find("Q1") is None


def test_poison_move_is_durable(env: Env) -> None:
    env.define("BO")
    env.define("Q1", BOTHRESH=1, BOQNAME="BO")
    h = env.open("Q1")
    env.put(h, b"p", persistence=1)
    env.get(h, C.MQGMO_SYNCPOINT)
    env.qm.backout(env.hconn)
    restart(env)
    assert env.depth("Q1") == 0
    assert drain(env, "BO") == [(b"p", 1)]


def test_unreadable_message_record_is_skipped_not_fatal(env: Env) -> None:
    from ferrymq.engine.message import KIND_MESSAGE

    env.define("Q1")
    h = env.open("Q1")
    env.put(h, b"good", persistence=1)
    env.journal.add(999_999, KIND_MESSAGE, b"\x09garbage")
    restart(env)
    assert drain(env, "Q1") == [(b"good", 0)]


def test_properties_survive_a_crash(env: Env) -> None:
    env.define("Q1")
    h = env.open("Q1")
    env.qm.put(env.hconn, h, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(), b"x",
               {"colour": "red", "n": 3, "ok": False, "r": 1.5})
    env.journal.sync()
    qm = QueueManager.start("QM1", env.journal.crash(), FakeClock())
    msg = next(iter(qm.objects.require("Q1").messages.by_seq.values()))
    assert msg.properties == {"colour": "red", "n": 3, "ok": False, "r": 1.5}


def test_the_spark_commit_queue_is_a_system_object_defined_again_at_start(env: Env) -> None:
    # The Spark connector's streaming writes need it: a new queue manager has it, and one
    # created before it existed (here: deleted) gets it at its next start, as MQ's system
    # objects are.
    q = env.qm.objects.require("FERRYMQ.SPARK.COMMITS")
    assert (q.qtype, q["DEFPSIST"]) == ("QLOCAL", C.MQPER_PERSISTENT)
    env.qm.objects.delete("FERRYMQ.SPARK.COMMITS")
    restart(env)
    assert env.qm.objects.find("FERRYMQ.SPARK.COMMITS") is not None


def test_an_unreadable_catalogue_record_is_named_and_its_queues_messages_kept(env: Env,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    """A queue's, the queue manager's or a sequence reservation's record that passes its
    checksum but cannot be read is logged by kind and record id, left in the journal, and
    the queue manager starts with the rest. The queue's messages stay in the journal: once
    the queue is defined again they are on it."""
    env.define("Q1")
    env.define("Q2")
    for name in ("Q1", "Q2"):
        env.put(env.open(name), name.encode(), persistence=1)
    bad = env.qm.objects.require("Q1").record_id
    env.journal.update(bad, KIND_OBJECT, b'{"name": "Q1"')
    env.journal.add(999_001, KIND_QMGR, b"\xff\xfe")
    env.journal.add(999_002, KIND_SEQUENCE, b"{}")
    with caplog.at_level(logging.ERROR, logger="ferrymq.engine"):
        restart(env)
    logged = caplog.text
    assert f"event=unreadable_catalogue_record kind=queue record_id={bad} " in logged
    assert "kind=qmgr record_id=999001" in logged and "kind=sequence record_id=999002" in logged
    assert env.qm.objects.find("Q1") is None
    assert drain(env, "Q2") == [(b"Q2", 0)]
    env.define("Q1")
    restart(env)
    assert drain(env, "Q1") == [(b"Q1", 0)]
