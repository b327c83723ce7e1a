"""QueueManager.put_each (a receiving channel agent's batch in one engine call): each
message is put as MQPUT puts it, and the first refusal stops the run, with what one put
after another would leave: the same stored messages, unit of work, refusals and events."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import Env

from ferrymq.engine.api import PutOptions
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

SET_ALL = C.MQPMO_SYNCPOINT | C.MQPMO_SET_ALL_CONTEXT


def _descriptors() -> list[MQMD]:
    """What a sender sends: context and put time per message, a priority that changes the
    plan halfway, an expiry, persistent and not."""
    out = []
    for n in range(12):
        out.append(MQMD(version=2, msg_id=bytes([n + 1]) * 24, user_identifier=f"user{n % 3}",
                        put_appl_name="far.app", put_date="20261127", put_time=f"1000{n:02d}00",
                        priority=3 if n < 6 else 8, persistence=1 if n < 8 else 0, expiry=-1 if n != 4 else 600))
    return out


def _env(**attrs: object) -> tuple[Env, int]:
    env = Env()
    env.define("Q", **attrs)
    env.qm.objects.alter_qmgr({"PERFMEV": "ENABLED"})
    env.qm.objects.alter("Q", {"QDPMAXEV": "ENABLED"})
    return env, env.open("Q", C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)


def _state(env: Env) -> list[Any]:
    q = env.qm.objects.require("Q")
    messages = [(m.key, m.md, m.md_bytes(), m.data, m.record_id != 0, m.expires_at) for m in q.messages.by_seq.values()]
    uow = env.qm.connections[env.hconn].uow
    puts = [(q.name, m.seq, m.md_bytes(), m.data, m.record_id != 0) for q, m in (uow.puts if uow else [])]
    env.qm.commit(env.hconn)
    return [messages, puts, env.depth("SYSTEM.ADMIN.PERFM.EVENT"), _recovered(env)]


def _recovered(env: Env) -> list[Any]:
    """The messages a restart finds after the unit's commit: each record as it was staged."""
    env.journal.sync()
    qm = QueueManager.start("QM1", env.journal.crash(), env.clock)
    return [(m.seq, m.md_bytes(), m.data) for m in qm.objects.require("Q").messages.by_seq.values()]


def _one_by_one(items: list[tuple[MQMD, bytes]], **attrs: object) -> list[Any]:
    env, hobj = _env(**attrs)
    outcomes: list[Any] = []
    for md, data in items:
        try:
            env.qm.put(env.hconn, hobj, md, PutOptions(SET_ALL), data)
            outcomes.append(None)
        except MQError as exc:
            outcomes.append((exc.comp, exc.reason))
            break
    return [outcomes, *_state(env)]


def _together(items: list[tuple[MQMD, bytes]], **attrs: object) -> list[Any]:
    env, hobj = _env(**attrs)
    done, refused = env.qm.put_each(env.hconn, hobj, PutOptions(SET_ALL), items)
    outcomes: list[Any] = [None] * done
    if refused is not None:
        outcomes.append((refused.comp, refused.reason))
    return [outcomes, *_state(env)]


@pytest.mark.parametrize(("attrs", "big_at", "stopped_at"), [
    ({}, -1, -1),
    ({"MAXDEPTH": 7}, -1, 7),  # MQRC_Q_FULL, with its Queue Full event
    ({"MAXMSGL": 100}, 9, 9),  # MQRC_MSG_TOO_BIG_FOR_Q
    ({"PUT": "DISABLED"}, -1, 0),  # MQRC_PUT_INHIBITED, the first put
])
def test_put_each_puts_as_one_put_after_another(attrs: dict[str, object], big_at: int, stopped_at: int) -> None:
    items = [(md, bytes(200 if i == big_at else 50) + bytes([i])) for i, md in enumerate(_descriptors())]
    together = _together(items, **attrs)
    assert together == _one_by_one(items, **attrs)
    outcomes = together[0]
    assert together[-2] == (1 if "MAXDEPTH" in attrs else 0)  # the Queue Full event
    assert len(together[-1]) == min(8, outcomes.count(None))  # the first eight are persistent
    if stopped_at < 0:
        assert outcomes == [None] * len(items)
    else:
        assert len(outcomes) == stopped_at + 1 and outcomes[-1] is not None


def test_put_each_goes_on_from_start() -> None:
    env, hobj = _env()
    items = [(md, b"x") for md in _descriptors()]
    assert env.qm.put_each(env.hconn, hobj, PutOptions(SET_ALL), items, 5) == (7, None)
    uow = env.qm.connections[env.hconn].uow
    assert uow is not None and [m.md.msg_id[0] for _, m in uow.puts] == list(range(6, 13))


def test_put_each_refuses_a_bad_handle_as_put_does() -> None:
    env, _ = _env()
    done, refused = env.qm.put_each(env.hconn, 999, PutOptions(SET_ALL), [(MQMD(version=2), b"x")])
    assert done == 0 and refused is not None and refused.reason == C.MQRC_HOBJ_ERROR


def test_put_each_stages_a_runs_records_with_one_journal_call() -> None:
    # The persistent messages of a run in a unit of work are staged together (Staging.
    # journal_messages): one add_run for the run, numbered in put order; a put the plan does
    # not cover (the priority changes at the seventh) comes after the records before it.
    env, hobj = _env()
    calls: list[tuple[str, list[int]]] = []
    add, add_run = env.journal.add, env.journal.add_run
    env.journal.add = lambda rid, *a, **k: calls.append(("add", [rid])) or add(rid, *a, **k)  # type: ignore[method-assign]
    env.journal.add_run = lambda kind, items, *a, **k: (  # type: ignore[method-assign]
        calls.append(("add_run", [rid for rid, _ in items])) or add_run(kind, items, *a, **k))
    items = [(MQMD(version=2, msg_id=bytes([n + 1]) * 24, user_identifier="far", put_date="20261127",
                   put_time=f"1000{n:02d}00", priority=3 if n < 6 else 8, persistence=1), b"x") for n in range(12)]
    assert env.qm.put_each(env.hconn, hobj, PutOptions(SET_ALL), items) == (12, None)
    messages = [(what, len(ids)) for what, ids in calls if what == "add_run"]
    assert messages == [("add_run", 1), ("add_run", 5), ("add_run", 1), ("add_run", 5)], calls  # a put makes the plan
    ids = [rid for _, rids in calls for rid in rids]
    uow = env.qm.connections[env.hconn].uow
    assert uow is not None
    assert [m.record_id for _, m in uow.puts] == sorted(m.record_id for _, m in uow.puts) == ids[-12:]
