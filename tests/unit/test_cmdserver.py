"""The command server's own rules, driven in-process over a real engine (MemoryJournal,
fake clock): it never ends because of a queue attribute or a message; it answers, dead-
letters and goes on. (Over TCP and in a real process: tests/integration/test_command_server*.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from engine_helpers import Env

from ferrymq.engine.api import ObjectDescriptor, PutOptions
from ferrymq.engine.commands.pcfmap import answer
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command
from ferrymq.server import cmdserver
from ferrymq.server.cmdserver import COMMAND_QUEUE, CommandServer
from ferrymq.wire import pcf as P
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD


def now(lsn: int, send: Callable[[], None]) -> None:
    send()  # MemoryJournal: nothing to wait for


class Admin:
    """An engine with its command server, and a client's way of talking to it."""

    def __init__(self) -> None:
        self.env = Env()
        self.env.define("REPLY")
        self.cs = CommandServer(self.env.qm, now)
        self.cs.pump()

    def deliver(self) -> None:
        for d in self.env.qm.take_deliveries():
            assert self.cs.deliver(d)

    def put(self, data: bytes, *, reply_to: str = "REPLY", fmt: str = C.MQFMT_ADMIN, props: dict[str, object] | None = None,
            persistence: int = C.MQPER_NOT_PERSISTENT) -> bytes:
        md = MQMD(msg_type=C.MQMT_REQUEST, format=fmt, reply_to_q=reply_to, persistence=persistence,
                  encoding=P.NATIVE)
        res = self.env.qm.put1(self.env.hconn, ObjectDescriptor(object_name=COMMAND_QUEUE), md,
                               PutOptions(C.MQPMO_NO_SYNCPOINT), data, properties=props)
        self.deliver()
        return res.md.msg_id

    def run(self, cmd: Command, **kw: object) -> list[P.PCFMessage]:
        msg_id = self.put(from_command(cmd).pack(), **kw)  # type: ignore[arg-type]
        return self.replies(msg_id)

    def replies(self, msg_id: bytes) -> list[P.PCFMessage]:
        out = []
        reply = self.env.open("REPLY", C.MQOO_INPUT_SHARED)  # held only meanwhile: see the MAXHANDS test
        while self.env.depth("REPLY"):
            got = self.env.get(reply, correl_id=msg_id, match=C.MQMO_MATCH_CORREL_ID)
            out.append(P.PCFMessage.unpack(got.data, got.md.encoding))
        self.env.qm.close(self.env.hconn, reply)
        return out

    def dead_letters(self) -> list[tuple[MQDLH, MQMD, bytes]]:
        hobj = self.env.open("SYSTEM.DEAD.LETTER.QUEUE", C.MQOO_INPUT_SHARED)
        out = []
        while self.env.depth("SYSTEM.DEAD.LETTER.QUEUE"):
            got = self.env.get(hobj)
            dlh = MQDLH.unpack_from(got.data)
            out.append((dlh, got.md, got.data[C.MQDLH_LENGTH_1:]))
        self.env.qm.close(self.env.hconn, hobj)
        return out

    def pings(self) -> bool:
        out = self.run(Command(F.MQCMD_PING_Q_MGR))
        return [(m.header.comp_code, m.header.control) for m in out] == [(C.MQCC_OK, F.MQCFC_LAST)]


def set_get(env: Env, value: int) -> None:
    q = env.open(COMMAND_QUEUE, C.MQOO_SET)
    env.qm.set(env.hconn, q, {C.MQIA_INHIBIT_GET: value}, {})
    env.qm.close(env.hconn, q)


def test_get_disabled_makes_it_idle_and_it_resumes_when_enabled() -> None:
    a = Admin()
    assert a.pings()
    disable = Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: COMMAND_QUEUE, C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                         C.MQIA_INHIBIT_GET: C.MQQA_GET_INHIBITED})
    assert [m.header.reason for m in a.run(disable)] == [0]  # any client may: the security issue's
    queued = a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack())
    assert a.replies(queued) == [] and a.cs.idle
    a.cs.pump()  # what every tick does: still inhibited, still idle, nothing lost
    assert a.env.depth(COMMAND_QUEUE) == 1 and a.cs.idle
    set_get(a.env, C.MQQA_GET_ALLOWED)
    a.cs.pump()
    assert [m.header.comp_code for m in a.replies(queued)] == [C.MQCC_OK]
    assert not a.cs.idle and a.pings()


def test_get_disabled_while_waiting_ends_the_wait_not_the_server() -> None:
    a = Admin()
    set_get(a.env, C.MQQA_GET_INHIBITED)  # MQSET by an application while the command server waits
    queued = a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack())  # wakes the wait with 2016
    assert a.replies(queued) == [] and a.cs.idle
    set_get(a.env, C.MQQA_GET_ALLOWED)
    a.cs.pump()
    assert len(a.replies(queued)) == 1 and a.pings()


def test_the_command_queue_cannot_be_deleted_while_served() -> None:
    a = Admin()
    for purge in (F.MQPO_NO, F.MQPO_YES):
        out = a.run(Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: COMMAND_QUEUE, F.MQIACF_PURGE: purge}))
        assert [(m.header.comp_code, m.header.reason) for m in out] == [(C.MQCC_FAILED, F.MQRCCF_OBJECT_OPEN)]
    set_get(a.env, C.MQQA_GET_INHIBITED)
    a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack())
    assert a.cs.idle and a.cs.hobj  # idle, but the queue stays open: DELETE is still refused
    delete = from_command(Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: COMMAND_QUEUE, F.MQIACF_PURGE: F.MQPO_YES}))
    [out] = answer(a.env.qm, delete.pack(), P.NATIVE)  # the executor, as embedded MQSC reaches it
    assert P.PCFMessage.unpack(out).header.reason == F.MQRCCF_OBJECT_OPEN


def test_an_executor_failure_is_answered_dead_lettered_and_the_next_request_served(
        monkeypatch: pytest.MonkeyPatch) -> None:
    a = Admin()
    real = cmdserver.answer

    def defect(qm: object, request: bytes, encoding: int, user: str | None = None) -> list[bytes]:
        if b"BOOM" in request:
            raise ZeroDivisionError("a defect in an executor")
        return real(qm, request, encoding, user)  # type: ignore[arg-type]

    monkeypatch.setattr(cmdserver, "answer", defect)  # fault injection: no real input reaches a defect today
    boom = Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "BOOM"})
    out = a.run(boom)
    assert [(m.header.comp_code, m.header.reason, m.header.command, m.header.control) for m in out] == [
        (C.MQCC_FAILED, F.MQRCCF_COMMAND_FAILED, F.MQCMD_INQUIRE_Q, F.MQCFC_LAST)]
    [(dlh, md, _)] = a.dead_letters()
    assert (dlh.reason, dlh.dest_q_name.strip(), md.reply_to_q.strip()) == (C.MQRC_UNEXPECTED_ERROR, COMMAND_QUEUE,
                                                                             "REPLY")
    assert a.pings() and not a.cs.idle


def test_a_reply_that_cannot_be_put_goes_to_the_dead_letter_queue() -> None:
    a = Admin()
    a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack(), reply_to="NO.SUCH.QUEUE")
    [(dlh, md, _)] = a.dead_letters()
    assert (dlh.reason, dlh.dest_q_name.strip(), dlh.format.strip()) == (C.MQRC_UNKNOWN_OBJECT_NAME, "NO.SUCH.QUEUE",
                                                                         C.MQFMT_ADMIN.strip())
    assert md.msg_type == C.MQMT_REPLY and md.put_appl_type == C.MQAT_QMGR
    assert a.pings()


def put_unencodable_property(a: Admin, data: bytes) -> bytes:
    """A request carrying a string property no codec can write ("\\ud800"). Should MQPUT
    refuse such text, the message is one a journal written before it did still holds:
    the value is set on the stored message itself."""
    try:
        return a.put(data, props={"bad": "\ud800"})
    except MQError:
        pass
    set_get(a.env, C.MQQA_GET_INHIBITED)  # keep it on the queue while it is made bad
    msg_id = a.put(data, props={"bad": "ok"})
    q = a.env.qm.objects.require(COMMAND_QUEUE)
    [msg] = q.messages.by_seq.values()
    assert msg.properties is not None
    msg.properties._items["bad"] = replace(msg.properties._items["bad"], value="\ud800")
    set_get(a.env, C.MQQA_GET_ALLOWED)
    a.cs.pump()
    return msg_id


def test_a_property_that_cannot_be_encoded_does_not_stop_the_pump() -> None:
    a = Admin()
    msg_id = put_unencodable_property(a, from_command(Command(F.MQCMD_PING_Q_MGR)).pack())
    assert [m.header.comp_code for m in a.replies(msg_id)] == [C.MQCC_OK]  # properties mean nothing to PCF
    assert a.pings()


def test_a_get_failing_without_an_mq_reason_idles_it_until_the_next_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    a = Admin()
    queued = a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack())
    assert len(a.replies(queued)) == 1
    real = a.env.qm.get

    def broken(*args: object, **kw: object) -> object:
        raise RecursionError("a defect in the engine's get")

    monkeypatch.setattr(a.env.qm, "get", broken)  # fault injection: no real message reaches a defect today
    set_get(a.env, C.MQQA_GET_INHIBITED)
    queued = a.put(from_command(Command(F.MQCMD_PING_Q_MGR)).pack())  # ends the wait; the get then fails
    assert a.cs.idle and a.env.depth(COMMAND_QUEUE) == 1
    a.cs.pump()  # a tick: fails again, quietly, still idle
    assert a.cs.idle
    monkeypatch.setattr(a.env.qm, "get", real)
    set_get(a.env, C.MQQA_GET_ALLOWED)
    a.cs.pump()
    assert len(a.replies(queued)) == 1 and a.pings()


def test_replies_need_no_handle_so_maxhands_cannot_silence_the_command_server() -> None:
    a = Admin()
    # The command server holds one handle (its queue); a requester holding none can still
    # put1 a request and then open its reply queue.
    low = Command(F.MQCMD_CHANGE_Q_MGR, {C.MQIA_MAX_HANDLES: 1})
    assert [m.header.reason for m in a.run(low)] == [0]
    assert a.pings() and a.dead_letters() == []
    back = Command(F.MQCMD_CHANGE_Q_MGR, {C.MQIA_MAX_HANDLES: 256})
    assert [m.header.reason for m in a.run(back)] == [0]
