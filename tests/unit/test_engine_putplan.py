"""MQPUT's kept plan (engine.putplan): a put through a handle whose plan is current gives what
a put worked out from scratch gives, and every change the plan depends on is seen at once."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import Env

from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, PutRequest, Waiting
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD

BIG = bytes(40_000)  # over the queue manager's lowest MAXMSGL (32 KiB)
NO_SYNC, SYNC = C.MQPMO_NO_SYNCPOINT, C.MQPMO_SYNCPOINT


def _quiesce(env: Env) -> None:
    env.qm.quiesce()


def _mqset_put_inhibited(env: Env) -> None:
    hobj = env.open("Q", C.MQOO_SET)
    env.qm.set(env.hconn, hobj, {C.MQIA_INHIBIT_PUT: C.MQQA_PUT_INHIBITED}, {})


# (what changes between puts, put options, data): each change decides the next put's outcome.
CHANGES: list[tuple[str, Any, int, bytes]] = [
    ("queue PUT(DISABLED)", ("Q", {"PUT": "DISABLED"}), NO_SYNC, b"x"),
    ("alias PUT(DISABLED)", ("A", {"PUT": "DISABLED"}), NO_SYNC, b"x"),
    ("MQSET InhibitPut", _mqset_put_inhibited, NO_SYNC, b"x"),
    ("queue DEFPRTY", ("Q", {"DEFPRTY": 7}), NO_SYNC, b"x"),
    ("alias DEFPRTY", ("A", {"DEFPRTY": 2}), NO_SYNC, b"x"),
    ("alias DEFPSIST", ("A", {"DEFPSIST": "YES"}), NO_SYNC, b"x"),
    ("queue MAXMSGL", ("Q", {"MAXMSGL": 4}), NO_SYNC, b"longer data"),
    ("queue MAXDEPTH", ("Q", {"MAXDEPTH": 2}), NO_SYNC, b"x"),
    ("queue MSGDLVSQ", ("Q", {"MSGDLVSQ": "FIFO", "DEFPRTY": 4}), NO_SYNC, b"x"),
    ("qmgr MAXMSGL", {"MAXMSGL": 32_768}, NO_SYNC, BIG),
    ("qmgr MAXUMSGS", {"MAXUMSGS": 2}, SYNC, b"x"),
    ("quiesce", _quiesce, NO_SYNC | C.MQPMO_FAIL_IF_QUIESCING, b"x"),
]


def _env() -> tuple[Env, list[int]]:
    env = Env()
    env.define("Q", MAXDEPTH=1000)
    env.qm.objects.define("QALIAS", "A", {"TARGET": "Q"})
    return env, [env.open("A", C.MQOO_OUTPUT), env.open("Q", C.MQOO_OUTPUT)]


def _run(change: Any, pmo: int, data: bytes, fresh: bool, reopen: bool = False) -> list[Any]:
    """Puts through the alias and the queue, the change, the same again; ``fresh``: every
    plan stale before each put; ``reopen``: both handles closed and opened again before the
    change (the new ones start with the closed ones' plans)."""
    env, handles = _env()
    outcomes: list[Any] = []
    for n in range(8):
        if n == 4 and reopen:
            for hobj in handles:
                env.qm.close(env.hconn, hobj)
            handles = [env.open("A", C.MQOO_OUTPUT), env.open("Q", C.MQOO_OUTPUT)]
        hobj = handles[n % 2]
        if n == 4:
            if change is None:
                pass
            elif callable(change):
                change(env)
            elif isinstance(change, dict):
                env.qm.objects.alter_qmgr(change)
            else:
                env.qm.objects.alter(*change)
        if fresh:
            env.qm.objects.epoch += 1
        md = MQMD(version=2, msg_id=bytes([n + 1]) * 24, priority=5 if pmo & SYNC else -1)
        try:
            r = env.qm.put(env.hconn, hobj, md, PutOptions(pmo), data)
            outcomes.append((r.md, r.comp, r.reason, r.sequence))
        except MQError as exc:
            outcomes.append((exc.comp, exc.reason))
    q = env.qm.objects.require("Q")
    outcomes.append([(m.key, m.md, m.md_bytes(), m.record_id != 0, m.v6) for m in q.messages.by_seq.values()])
    outcomes.append(len(env.qm.connections[env.hconn].uow or ()))
    return outcomes


@pytest.mark.parametrize(("change", "pmo", "data"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_a_change_between_puts_is_seen_by_the_next_put(change: Any, pmo: int, data: bytes) -> None:
    planned, fresh = _run(change, pmo, data, False), _run(change, pmo, data, True)
    assert planned == fresh
    assert planned != _run(None, pmo, data, False)  # the change matters: a stale plan would show


@pytest.mark.parametrize(("change", "pmo", "data"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_a_change_is_seen_through_a_handle_opened_again(change: Any, pmo: int, data: bytes) -> None:
    planned, fresh = _run(change, pmo, data, False, reopen=True), _run(change, pmo, data, True, reopen=True)
    assert planned == fresh
    assert planned != _run(None, pmo, data, False, reopen=True)


def test_a_handle_opened_again_the_same_way_starts_with_the_last_plan() -> None:
    """A channel's receiving agent opens its batch's destinations again per batch: the first
    put of the batch is planned as the others are."""
    env = Env()
    env.define("Q")
    env.define("R")
    options = C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT
    hobj = env.open("Q", options)
    conn = env.qm.connections[env.hconn]
    env.qm.put(env.hconn, hobj, MQMD(version=2), PutOptions(C.MQPMO_SET_ALL_CONTEXT), b"x")
    plan = conn.handles[hobj].put_plan
    assert plan is not None
    env.qm.close(env.hconn, hobj)
    again = env.open("Q", options)
    assert conn.handles[again].put_plan is plan
    stored = env.qm.put(env.hconn, again, MQMD(version=2, msg_id=b"M" * 24), PutOptions(C.MQPMO_SET_ALL_CONTEXT),
                        b"y")
    assert conn.handles[again].put_plan is plan and stored.md.msg_id == b"M" * 24 and env.depth("Q") == 2
    assert conn.handles[env.open("Q", C.MQOO_OUTPUT)].put_plan is None  # other options: its own
    assert conn.handles[env.open("R", options)].put_plan is None  # another queue


def test_a_plan_is_used_for_the_same_descriptor_and_options() -> None:
    env, (hobj, _) = _env()
    h = env.qm.connections[env.hconn].handles[hobj]
    env.qm.put(env.hconn, hobj, MQMD(version=2), PutOptions(NO_SYNC), b"x")
    plan = h.put_plan
    assert plan is not None
    env.qm.put(env.hconn, hobj, MQMD(version=2, msg_id=b"M" * 24, correl_id=b"C" * 24), PutOptions(NO_SYNC), b"y")
    assert h.put_plan is plan  # kept: only the identifiers differed
    env.qm.put(env.hconn, hobj, MQMD(version=2, priority=3), PutOptions(NO_SYNC), b"y")
    assert h.put_plan is not plan  # another descriptor: another plan


@pytest.mark.parametrize("pmo", [C.MQPMO_SET_IDENTITY_CONTEXT, C.MQPMO_NO_CONTEXT])
def test_no_plan_where_context_is_the_putters(pmo: int) -> None:
    env = Env()
    env.define("Q")
    hobj = env.open("Q", C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)
    env.qm.put(env.hconn, hobj, MQMD(version=2), PutOptions(pmo), b"x")
    assert env.qm.connections[env.hconn].handles[hobj].put_plan is None


def test_a_set_all_context_plan_stores_each_descriptors_own_put_time() -> None:
    """A channel's receiving agent puts with MQPMO_SET_ALL_CONTEXT: one plan serves messages
    that differ in MsgId, PutDate and PutTime, and each keeps its own."""
    env = Env()
    env.define("Q")
    hobj = env.open("Q", C.MQOO_OUTPUT | C.MQOO_SET_ALL_CONTEXT)
    h = env.qm.connections[env.hconn].handles[hobj]
    given = MQMD(version=2, user_identifier="alice", put_appl_name="far.app", put_appl_type=C.MQAT_UNIX,
                 put_date="20260101", put_time="10000000", appl_origin_data="o")
    env.qm.put(env.hconn, hobj, given, PutOptions(C.MQPMO_SET_ALL_CONTEXT), b"x")
    plan = h.put_plan
    assert plan is not None
    second = given.replace(msg_id=b"M" * 24, put_date="20261127", put_time="11223344")
    stored = env.qm.put(env.hconn, hobj, second, PutOptions(C.MQPMO_SET_ALL_CONTEXT), b"y").md
    assert h.put_plan is plan
    assert (stored.msg_id, stored.put_date, stored.put_time) == (b"M" * 24, "20261127", "11223344")
    assert (stored.user_identifier, stored.put_appl_name, stored.put_appl_type, stored.appl_origin_data) == (
        "alice", "far.app", C.MQAT_UNIX, "o")
    # as the server hands it over: the descriptor's bytes, matched to the plan without an MQMD
    third = given.replace(msg_id=b"N" * 24, put_time="12000000")
    stored = env.qm.put_request(PutRequest(env.hconn, hobj, third.pack(), C.MQPMO_SET_ALL_CONTEXT, 0, b"z")).md
    assert h.put_plan is plan
    assert (stored.msg_id, stored.put_date, stored.put_time) == (b"N" * 24, "20260101", "12000000")


def test_put1_keeps_no_plan() -> None:
    env = Env()
    env.define("Q")
    r = env.qm.put1(env.hconn, ObjectDescriptor("Q"), MQMD(version=2), PutOptions(NO_SYNC), b"x")
    assert r.reason == C.MQRC_NONE and env.depth("Q") == 1


@pytest.mark.parametrize("report", [0, C.MQRO_COA, C.MQRO_COD, C.MQRO_COA | C.MQRO_COD_WITH_DATA])
@pytest.mark.parametrize("wait_options", [C.MQGMO_NO_SYNCPOINT, C.MQGMO_SYNCPOINT])
@pytest.mark.parametrize("save_context", [0, C.MQOO_SAVE_ALL_CONTEXT])
def test_planned_puts_hand_over_as_fresh_ones_do(report: int, wait_options: int, save_context: int) -> None:
    """Puts to a waiting get (saving context, in or out of syncpoint) with reports asked for:
    the deliveries, the getter's saved context and the reports are those of fresh puts."""

    def run(fresh: bool) -> list[Any]:
        env = Env()
        env.define("Q")
        env.define("R")
        getter = env.qm.connect(appl_name="getter")
        hget = env.open("Q", C.MQOO_INPUT_SHARED | save_context, hconn=getter)
        hput = env.open("Q", C.MQOO_OUTPUT)
        seen: list[Any] = []
        for n in range(4):
            w = env.qm.get(getter, hget, MQMD(version=2), GetOptions(C.MQGMO_WAIT | wait_options, 1000, C.MQMO_NONE,
                                                                     msg_handle=bool(n % 2)), 100)
            assert isinstance(w, Waiting)
            if fresh:
                env.qm.objects.epoch += 1
            md = MQMD(version=2, msg_id=bytes([n + 1]) * 24, report=report, reply_to_q="R" if report else "")
            r = env.qm.put(env.hconn, hput, md, PutOptions(NO_SYNC), b"data")
            seen.append((r.md, r.sequence, env.qm.take_sync_lsn()))
            for d in env.qm.take_deliveries():
                got = d.result
                assert got is not None
                seen.append((d.waiter_id, d.sync_lsn, got.md, got.md_bytes, got.data, got.msg_token, got.sequence,
                             got.properties is None))
                # and what both ways share (handover.give) is what MQGET would do:
                saved = env.qm.connections[getter].handles[hget].saved_context
                assert saved == (got.md if save_context else None)
                uow = env.qm.connections[getter].uow
                assert bool(uow is not None and uow.gets) == bool(wait_options & C.MQGMO_SYNCPOINT)
            if n == 2:
                env.qm.commit(getter)
        reports = env.qm.objects.require("R").messages.by_seq.values()
        seen.append([(m.md.feedback, m.md.correl_id, m.data) for m in reports])
        seen.append((env.depth("Q"), env.qm.objects.require("Q").last_get))
        return seen

    assert run(False) == run(True)
