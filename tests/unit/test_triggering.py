"""Triggering against IBM's conditions: FIRST, EVERY, DEPTH, TRIGMPRI, the trigger monitor's
open of the initiation queue, TRIGGER set on, units of work, TRIGINT, and the MQTM bytes."""

from __future__ import annotations

import struct

import pytest
from engine_helpers import Env

from ferrymq.engine.api import ObjectDescriptor
from ferrymq.errors import DecodeError
from ferrymq.mq import constants as C
from ferrymq.wire.mqtm import MQTM, MQTMC2

INITQ = "APP.INITQ"
APPQ = "APP.Q"
_GET = C.MQOO_INPUT_AS_Q_DEF


def setup(kind: str = "FIRST", monitor: bool = True, **more: object) -> tuple[Env, int, int | None]:
    """A queue manager with a process, an initiation queue (open for input when ``monitor``)
    and a triggered application queue; returns the env, a put handle and the monitor's."""
    env = Env()
    env.qm.state.processes.define("APP.PROC", {"APPLICID": "/usr/bin/app --serve", "USERDATA": "user data",
                                               "ENVRDATA": "env data", "APPLTYPE": "UNIX", "DESCR": "app"})
    env.define(INITQ)
    attrs: dict[str, object] = {"TRIGGER": "TRIGGER", "TRIGTYPE": kind, "INITQ": INITQ, "PROCESS": "APP.PROC",
                                "TRIGDATA": "trig data"}
    attrs.update(more)
    env.define(APPQ, **attrs)
    mon = env.open(INITQ, _GET) if monitor else None
    return env, env.open(APPQ, C.MQOO_OUTPUT), mon


def trigger_messages(env: Env) -> list[MQTM]:
    q = env.qm.objects.require(INITQ)
    out = []
    for msg in list(q.messages.by_seq.values()):
        assert msg.md.format == C.MQFMT_TRIGGER.rstrip()
        out.append(MQTM.unpack_from(msg.data))
    return out


def test_first_fires_on_zero_to_one_only() -> None:
    env, h, _ = setup("FIRST")
    env.put(h)
    env.put(h)
    [tm] = trigger_messages(env)
    assert (tm.q_name, tm.process_name, tm.trigger_data) == (APPQ, "APP.PROC", "trig data")
    assert (tm.appl_id, tm.env_data, tm.user_data, tm.appl_type) == ("/usr/bin/app --serve", "env data",
                                                                      "user data", C.MQAT_UNIX)
    got = env.get(env.open(INITQ, _GET))
    assert got.md.persistence == C.MQPER_NOT_PERSISTENT and got.md.put_appl_type == C.MQAT_QMGR
    assert len(got.data) == C.MQTM_LENGTH_1


def test_first_fires_again_once_the_queue_was_emptied() -> None:
    env, h, _ = setup("FIRST")
    env.put(h)
    reader = env.open(APPQ, _GET)
    env.get(reader)
    env.qm.close(env.hconn, reader)
    env.put(h)
    assert len(trigger_messages(env)) == 2


def test_first_and_depth_need_the_queue_closed_for_input_every_does_not() -> None:
    env, h, _ = setup("FIRST")
    env.open(APPQ, _GET)  # the server is running
    env.put(h)
    assert trigger_messages(env) == []
    env, h, _ = setup("EVERY")
    env.open(APPQ, _GET)
    env.put(h)
    env.put(h)
    assert len(trigger_messages(env)) == 2


def test_every_fires_per_message_of_the_priority() -> None:
    env, h, _ = setup("EVERY", TRIGMPRI=5)
    env.put(h, priority=4)
    env.put(h, priority=5)
    env.put(h, priority=9)
    assert len(trigger_messages(env)) == 2


def test_first_counts_only_messages_of_trigmpri_or_more() -> None:
    env, h, _ = setup("FIRST", TRIGMPRI=5)
    env.put(h, priority=1)  # does not count, does not fire
    assert trigger_messages(env) == []
    env.put(h, priority=6)  # the first that counts
    env.put(h, priority=7)
    assert len(trigger_messages(env)) == 1


def test_depth_fires_at_trigdpth_and_sets_notrigger() -> None:
    env, h, _ = setup("DEPTH", TRIGDPTH=3)
    env.put(h)
    env.put(h)
    assert trigger_messages(env) == []
    env.put(h)
    assert len(trigger_messages(env)) == 1
    assert env.qm.objects.require(APPQ).attrs["TRIGGER"] == C.MQTC_OFF
    env.put(h)
    assert len(trigger_messages(env)) == 1
    # set on again with the depth still met: a trigger event at once (no put needed)
    env.qm.objects.alter(APPQ, {"TRIGGER": "TRIGGER"})
    env.qm.altered(env.qm.objects.require(APPQ), {"TRIGGER": C.MQTC_ON})
    assert len(trigger_messages(env)) == 2


@pytest.mark.parametrize("why", ["no monitor", "no process", "no initq", "get inhibited", "notrigger", "none"])
def test_no_trigger_message_unless_every_condition_holds(why: str) -> None:
    more: dict[str, object] = {"no process": {"PROCESS": "MISSING"}, "no initq": {"INITQ": "MISSING"},
                               "get inhibited": {"GET": "DISABLED"}, "notrigger": {"TRIGGER": "NOTRIGGER"},
                               "none": {"TRIGTYPE": "NONE"}}.get(why, {})  # type: ignore[assignment]
    env, h, _ = setup("EVERY", monitor=why != "no monitor", **more)
    env.put(h)
    assert trigger_messages(env) == []


def test_monitor_opening_the_initq_triggers_waiting_queues() -> None:
    env, h, _ = setup("FIRST", monitor=False)
    env.put(h)
    env.put(h)
    assert trigger_messages(env) == []
    env.open(INITQ, _GET)  # the trigger monitor starts (after a restart, say)
    assert len(trigger_messages(env)) == 1
    env.open(INITQ, _GET)  # a second handle is not the first: nothing more
    assert len(trigger_messages(env)) == 1


def test_unit_of_work_trigger_message_arrives_at_commit_or_backout() -> None:
    env, h, _ = setup("FIRST")
    env.put(h, pmo=C.MQPMO_SYNCPOINT)
    assert trigger_messages(env) == []
    env.put(h, pmo=C.MQPMO_SYNCPOINT)  # uncommitted messages count: no second event
    env.qm.backout(env.hconn)
    assert len(trigger_messages(env)) == 1  # delivered even though the unit backed out
    env.put(h, pmo=C.MQPMO_SYNCPOINT)
    env.qm.commit(env.hconn)
    assert len(trigger_messages(env)) == 2


def test_first_retriggers_a_non_empty_queue_after_trigint() -> None:
    env, h, _ = setup("FIRST")
    env.qm.objects.alter_qmgr({"TRIGINT": 1000})
    env.put(h)
    env.put(h)
    assert len(trigger_messages(env)) == 1
    env.clock.advance(1.5)
    env.put(h)
    assert len(trigger_messages(env)) == 2


def test_full_initq_sends_the_trigger_message_to_the_dlq() -> None:
    env, h, _ = setup("EVERY")
    env.qm.objects.alter(INITQ, {"PUT": "DISABLED"})
    env.put(h)
    dlq = env.qm.objects.require("SYSTEM.DEAD.LETTER.QUEUE")
    [msg] = list(dlq.messages.by_seq.values())
    assert msg.md.format == C.MQFMT_DEAD_LETTER_HEADER.rstrip()
    assert msg.data[4 + 4:8 + 4] == struct.pack("<i", C.MQRC_PUT_INHIBITED)
    assert MQTM.unpack_from(msg.data, C.MQDLH_LENGTH_1).q_name == APPQ


def test_put1_and_a_run_of_puts_trigger_too() -> None:
    env, h, _ = setup("EVERY")
    from ferrymq.engine.api import PutOptions
    from ferrymq.wire.mqmd import MQMD
    env.qm.put1(env.hconn, ObjectDescriptor(object_name=APPQ), MQMD(), PutOptions(0), b"x")
    env.qm.put_many(env.hconn, h, MQMD(), PutOptions(0), [(bytes(24), b"a"), (bytes(24), b"b")])
    assert len(trigger_messages(env)) == 3


# -- MQTM and MQTMC2 bytes ---------------------------------------------------------------

def test_mqtm_layout_matches_the_spec() -> None:
    tm = MQTM("Q", "P", "TD", 6, "APP", "ENV", "USER")
    raw = tm.pack()
    assert len(raw) == 684
    assert raw[0:4] == b"TM  " and struct.unpack_from("<i", raw, 4)[0] == 1
    assert raw[8:56] == b"Q".ljust(48) and raw[56:104] == b"P".ljust(48) and raw[104:168] == b"TD".ljust(64)
    assert struct.unpack_from("<i", raw, 168)[0] == 6
    assert raw[172:428] == b"APP".ljust(256) and raw[428:556] == b"ENV".ljust(128)
    assert raw[556:684] == b"USER".ljust(128)
    assert MQTM.unpack_from(raw) == tm
    big = tm.pack(big_endian=True)
    assert struct.unpack_from(">i", big, 168)[0] == 6 and MQTM.unpack_from(big) == tm
    with pytest.raises(DecodeError):
        MQTM.unpack_from(raw[:100])
    with pytest.raises(DecodeError):
        MQTM.unpack_from(b"XX  " + raw[4:])


def test_mqtmc2_character_form() -> None:
    raw = MQTM("Q", "P", "TD", 6, "APP", "ENV", "USER").character_form("QM1")
    assert len(raw) == 732
    assert raw[0:8] == b"TMC    2" and raw[168:172] == b"   6" and raw[684:732] == b"QM1".ljust(48)
    parsed = MQTMC2.parse(raw.rstrip())  # a shell may drop trailing blanks
    assert (parsed.q_name, parsed.appl_type, parsed.appl_id, parsed.q_mgr_name) == ("Q", 6, "APP", "QM1")
    with pytest.raises(DecodeError):
        MQTMC2.parse(b"nonsense")
