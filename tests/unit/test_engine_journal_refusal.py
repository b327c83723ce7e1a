"""The engine while its journal refuses persistent work (disk below reserve, full, failed):
persistent puts get MQRC_RESOURCE_PROBLEM and change nothing, whatever path they take;
non-persistent puts and gets go on; the refusal lifts with the journal's."""

from __future__ import annotations

import pytest
from engine_helpers import Env

from ferrymq.engine.api import ObjectDescriptor, PutOptions
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

WHY = "the journal's disk is full (test)"


@pytest.fixture
def env() -> Env:
    e = Env()
    e.define("Q1")
    return e


def _refused(exc: MQError | None) -> None:
    assert exc is not None
    assert (exc.comp, exc.reason) == (C.MQCC_FAILED, C.MQRC_RESOURCE_PROBLEM)
    assert WHY in exc.detail


def test_persistent_puts_are_refused_on_every_path_and_change_nothing(env: Env) -> None:
    hobj = env.open("Q1")
    env.put(hobj, b"before", persistence=C.MQPER_PERSISTENT)  # the handle now has a plan
    lsn = env.journal.appended_lsn
    env.journal.refusal = WHY
    for _ in range(2):  # the plan made before the refusal, then a fresh one
        with pytest.raises(MQError) as e:
            env.put(hobj, b"refused", persistence=C.MQPER_PERSISTENT)
        _refused(e.value)
    with pytest.raises(MQError) as e:
        env.put(hobj, b"refused", pmo=C.MQPMO_SYNCPOINT, persistence=C.MQPER_PERSISTENT)
    _refused(e.value)
    with pytest.raises(MQError) as e:
        env.qm.put1(env.hconn, ObjectDescriptor(object_name="Q1"), MQMD(persistence=C.MQPER_PERSISTENT),
                    PutOptions(0), b"refused")
    _refused(e.value)
    outcomes = env.qm.put_many(env.hconn, hobj, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(0),
                               [(b"\0" * 24, b"a"), (b"\0" * 24, b"b")])
    for exc in outcomes:
        _refused(exc)
    assert env.journal.appended_lsn == lsn  # nothing staged
    assert env.depth("Q1") == 1
    env.put(hobj, b"transient", persistence=C.MQPER_NOT_PERSISTENT)
    assert env.get(hobj).data == b"before"  # gets go on (their delete waits for the disk)
    assert env.get(hobj).data == b"transient"


def test_the_refusal_lifts_with_the_journals(env: Env) -> None:
    hobj = env.open("Q1")
    env.journal.refusal = WHY
    with pytest.raises(MQError):
        env.put(hobj, b"refused", persistence=C.MQPER_PERSISTENT)
    env.journal.refusal = ""
    env.put(hobj, b"accepted", persistence=C.MQPER_PERSISTENT)
    assert env.get(hobj).data == b"accepted"


def test_other_refusals_come_first(env: Env) -> None:
    env.define("Q2", MAXDEPTH=1, PUT="DISABLED")
    hobj = env.open("Q2")
    env.journal.refusal = WHY
    with pytest.raises(MQError) as e:
        env.put(hobj, b"x", persistence=C.MQPER_PERSISTENT)
    assert e.value.reason == C.MQRC_PUT_INHIBITED
