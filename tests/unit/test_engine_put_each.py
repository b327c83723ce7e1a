"""QueueManager.put_each (a receiving channel agent's batch in one engine call): each
message is put as MQPUT puts it, and the first refusal stops the run, with what one put
after another would leave: the same stored messages, unit of work, refusals and events."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import Env

from ferrymq.engine.api import PutOptions
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
    return [messages, puts, env.depth("SYSTEM.ADMIN.PERFM.EVENT")]


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
    assert together[-1] == (1 if "MAXDEPTH" in attrs else 0)  # the Queue Full event
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
