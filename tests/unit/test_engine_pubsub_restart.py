"""Publish/subscribe across restarts: durable subscriptions, the persistent publications
waiting for them and persistent retained publications survive; the rest does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import Env
from test_engine_pubsub import MANAGED, publish, received, sub

from ferrymq.engine.api import FakeClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.engine.subscriptions import Subscription, decode_subscription
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal

DURABLE = MANAGED | C.MQSO_DURABLE
RESUME = C.MQSO_RESUME | C.MQSO_DURABLE | C.MQSO_MANAGED


def crash_restart(env: Env) -> None:
    """Restart on what was durable (the driver syncs before acknowledging: sync first)."""
    env.journal.sync()
    assert isinstance(env.journal, MemoryJournal)
    env.journal = env.journal.crash()
    env.qm = QueueManager.start("QM1", env.journal, env.clock)
    env.hconn = env.qm.connect(user="tester")


@pytest.fixture
def env() -> Env:
    return Env()


def test_durable_subscription_and_its_persistent_publications_survive_a_crash(env: Env) -> None:
    d = sub(env, "news/#", DURABLE, sub_name="D", sub_user_data="desk", selection_string="Root.MQMD.Priority > 1")
    nd = sub(env, "news/#")
    env.qm.close(env.hconn, d.hsub)
    publish(env, "news/a", b"kept", persistence=C.MQPER_PERSISTENT, priority=5)
    publish(env, "news/a", b"selected out", persistence=C.MQPER_PERSISTENT, priority=0)
    publish(env, "news/a", b"non-persistent", priority=5)
    crash_restart(env)
    assert env.qm.objects.find(nd.queue_name) is None
    assert [s.key for s in env.qm.subscriptions] == ["D"]
    back = sub(env, "", RESUME, sub_name="D")
    assert (back.queue_name, back.sub_correl_id, back.res_object_string) == (d.queue_name, d.sub_correl_id, "news/#")
    got = received(env, back.hobj)
    assert [r.data for r in got] == [b"kept"]
    assert got[0].properties is not None and got[0].properties["mqps.Sud"] == "desk"
    publish(env, "news/b", b"after", priority=3)  # the selector survived too
    publish(env, "news/b", b"not after", priority=1)
    assert [r.data for r in received(env, back.hobj)] == [b"after"]


def test_removed_subscription_stays_removed(env: Env) -> None:
    d = sub(env, "t", DURABLE, sub_name="D")
    env.qm.close(env.hconn, d.hsub, C.MQCO_REMOVE_SUB)
    crash_restart(env)
    assert len(env.qm.subscriptions) == 0
    assert env.qm.objects.find(d.queue_name) is None


def test_persistent_retained_survives_non_persistent_does_not(env: Env) -> None:
    publish(env, "r/p", b"old", pmo=C.MQPMO_RETAIN, persistence=C.MQPER_PERSISTENT)
    publish(env, "r/p", b"persistent", pmo=C.MQPMO_RETAIN, persistence=C.MQPER_PERSISTENT)
    publish(env, "r/n", b"transient", pmo=C.MQPMO_RETAIN)
    crash_restart(env)
    assert [r.data for r in received(env, sub(env, "r/#").hobj)] == [b"persistent"]
    assert env.qm.subscriber.clear_retained("r/p")
    crash_restart(env)
    assert received(env, sub(env, "r/#").hobj) == []


def test_file_journal_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    journal = FileJournal(tmp_path / "j", segment_size=64 * 1024)
    qm = QueueManager.start("QM1", journal, clock)
    env = Env.__new__(Env)
    env.clock, env.journal, env.qm = clock, journal, qm  # type: ignore[assignment]
    env.hconn = qm.connect(user="tester")
    d = sub(env, "f/t", DURABLE, sub_name="FILE.SUB")
    for i in range(3):
        publish(env, "f/t", b"%d" % i, persistence=C.MQPER_PERSISTENT, pmo=C.MQPMO_RETAIN)
    journal.sync()
    journal.close()
    journal = FileJournal(tmp_path / "j", segment_size=64 * 1024)
    env.journal, env.qm = journal, QueueManager.start("QM1", journal, clock)  # type: ignore[assignment]
    env.hconn = env.qm.connect(user="tester")
    back = sub(env, "", RESUME, sub_name="FILE.SUB")
    assert back.queue_name == d.queue_name
    assert [r.data for r in received(env, back.hobj)] == [b"0", b"1", b"2"]
    assert [r.data for r in received(env, sub(env, "f/#").hobj)] == [b"2"]
    journal.close()


def test_subscription_record_round_trip_and_damage() -> None:
    s = Subscription("N", b"I" * 24, "a/#", "", "Q", True, True, correl_id=b"C" * 24, user_data="u")
    back = decode_subscription(s.encode())
    assert (back.name, back.topic, back.correl_id, back.user_data, back.managed) == ("N", "a/#", b"C" * 24, "u", True)
    for bad in (b"", b"{}", b"[1]", b'{"name": 1}', s.encode().replace(b'"id": "', b'"id": "zz')):
        with pytest.raises(DecodeError):
            decode_subscription(bad)


def test_identifiers_made_after_a_restart_are_new(env: Env) -> None:
    """A restart on a journal holding only a subscription (no message) still makes later
    SUBIDs and CorrelIds (the clock has not moved: FakeClock)."""
    first = sub(env, "t", DURABLE, sub_name="OLD")
    crash_restart(env)
    second = sub(env, "t", DURABLE, sub_name="NEW")
    old = env.qm.subscriptions.find("OLD")
    new = env.qm.subscriptions.find("NEW")
    assert old is not None and new is not None
    assert new.sub_id != old.sub_id and second.sub_correl_id != first.sub_correl_id
    publish(env, "t")
    assert len(received(env, second.hobj)) == 1


def test_managed_queue_of_a_subscription_removed_before_a_crash_goes(env: Env) -> None:
    d = sub(env, "t", DURABLE, sub_name="D")
    publish(env, "t", b"x", persistence=C.MQPER_PERSISTENT)
    env.qm.close(env.hconn, d.hsub, C.MQCO_REMOVE_SUB)  # its queue waits for its handle to close
    assert env.qm.objects.find(d.queue_name) is not None
    crash_restart(env)
    assert env.qm.objects.find(d.queue_name) is None
    assert not [n for n in env.qm.objects.queues if n.startswith("SYSTEM.MANAGED.")]
