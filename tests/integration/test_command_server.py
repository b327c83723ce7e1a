"""The PCF command server of a real queue manager over TCP on 127.0.0.1: requests put to
SYSTEM.ADMIN.COMMAND.QUEUE by an ordinary client are answered on their ReplyToQ."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from ferrymq.admin.pcfclient import CommandClient
from ferrymq.api import EmbeddedQueueManager
from ferrymq.client import Client
from ferrymq.client.sync import connect
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.model import Command
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD


@pytest.fixture
def client(embedded: EmbeddedQueueManager) -> Iterator[Client]:
    c = connect("QM1", f"127.0.0.1({embedded.port})", appl_name="admin-test")
    yield c
    c.disconnect()


@pytest.mark.parametrize("encoding", [P.NATIVE, P.REVERSED], ids=["normal", "reversed"])
def test_commands_round_trip_in_both_encodings(client: Client, encoding: int) -> None:
    cc = CommandClient(client, encoding=encoding)
    created = cc.run(Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "ADM.Q", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                                C.MQIA_MAX_Q_DEPTH: 9}))
    assert [(r.comp, r.reason) for r in created] == [(0, 0)]
    again = cc.run(Command(F.MQCMD_CREATE_Q, {C.MQCA_Q_NAME: "ADM.Q", C.MQIA_Q_TYPE: C.MQQT_LOCAL}))
    assert [(r.comp, r.reason) for r in again] == [(C.MQCC_FAILED, F.MQRCCF_OBJECT_ALREADY_EXISTS)]
    q = client.open("ADM.Q")
    q.put(b"one")
    status = cc.run(Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "ADM.Q"}))
    assert status[0].params[C.MQIA_CURRENT_Q_DEPTH] == 1 and status[0].params[C.MQIA_OPEN_INPUT_COUNT] == 1
    handles = cc.run(Command(F.MQCMD_INQUIRE_Q_STATUS, {C.MQCA_Q_NAME: "ADM.Q", F.MQIACF_Q_STATUS_TYPE: F.MQIACF_Q_HANDLE}))
    assert [r.params[F.MQCACF_APPL_TAG] for r in handles] == ["admin-test"]
    assert handles[0].params[F.MQCACH_CONNECTION_NAME] == "127.0.0.1"  # TCP client: its address
    q.close()
    assert cc.run(Command(F.MQCMD_DELETE_Q, {C.MQCA_Q_NAME: "ADM.Q", F.MQIACF_PURGE: F.MQPO_YES}))[0].reason == 0
    assert cc.run(Command(F.MQCMD_PING_Q_MGR))[0].comp == C.MQCC_OK
    cc.close()


def test_reply_descriptor_follows_pcf_rules(client: Client) -> None:
    reply = client.open("SYSTEM.DEFAULT.MODEL.QUEUE", options=C.MQOO_INPUT_EXCLUSIVE, dynamic_q_name="T.*")
    req = P.PCFMessage(P.CFH(F.MQCFT_COMMAND, F.MQCMD_INQUIRE_Q_NAMES), (P.CFST(C.MQCA_Q_NAME, "SYSTEM.DEFAULT.*"),))
    md = MQMD(version=2, msg_type=C.MQMT_REQUEST, format=C.MQFMT_ADMIN, reply_to_q=reply.name,
              encoding=P.REVERSED, report=C.MQRO_PASS_CORREL_ID, correl_id=b"C" * 24, priority=3)
    client.put1("SYSTEM.ADMIN.COMMAND.QUEUE", req.pack(P.REVERSED), md=md)
    got = reply.get(10.0)
    assert got.md.msg_type == C.MQMT_REPLY and got.md.format.strip() == C.MQFMT_ADMIN.strip()
    assert got.md.correl_id == b"C" * 24 and got.md.encoding == P.REVERSED and got.md.priority == 3
    assert struct.unpack_from("<9i", got.data)[:8] == (F.MQCFT_RESPONSE, 36, 1, F.MQCMD_INQUIRE_Q_NAMES, 1, 1, 0, 0)
    names = P.PCFMessage.unpack(got.data, P.REVERSED).params[0]
    assert isinstance(names, P.CFSL) and "SYSTEM.DEFAULT.LOCAL.QUEUE" in names.values


def test_garbage_on_the_command_queue_is_answered_and_service_continues(client: Client) -> None:
    reply = client.open("SYSTEM.DEFAULT.MODEL.QUEUE", options=C.MQOO_INPUT_EXCLUSIVE, dynamic_q_name="T.*")
    for data, fmt, reason in ((b"\xff" * 50, C.MQFMT_ADMIN, F.MQRCCF_STRUCTURE_TYPE_ERROR),
                              (b"hello", C.MQFMT_STRING, F.MQRCCF_MD_FORMAT_ERROR)):
        put = client.put1("SYSTEM.ADMIN.COMMAND.QUEUE", data, md=MQMD(version=2, msg_type=C.MQMT_REQUEST, format=fmt,
                                                                      reply_to_q=reply.name))
        got = reply.get(10.0, correl_id=put.msg_id)
        hdr = P.PCFMessage.unpack(got.data, got.md.encoding).header
        assert (hdr.comp_code, hdr.reason, hdr.control) == (C.MQCC_FAILED, reason, F.MQCFC_LAST)
    cc = CommandClient(client)
    assert cc.run(Command(F.MQCMD_PING_Q_MGR))[0].comp == C.MQCC_OK


def test_command_server_serves_embedded_connections(embedded: EmbeddedQueueManager) -> None:
    c = embedded.connect(appl_name="bindings")
    try:
        conns = CommandClient(c).run(Command(F.MQCMD_INQUIRE_CONNECTION, {F.MQBACF_GENERIC_CONNECTION_ID: b""}))
        assert "ferrymq command server" in {r.params[F.MQCACF_APPL_TAG] for r in conns}
        assert "bindings" in {r.params[F.MQCACF_APPL_TAG] for r in conns}
    finally:
        c.disconnect()


def test_embedded_mqsc_runs_on_the_engine(embedded: EmbeddedQueueManager) -> None:
    results = embedded.mqsc("DEFINE QLOCAL(EMB.Q) MAXDEPTH(3)", "DISPLAY QLOCAL(EMB.Q) MAXDEPTH", "DELETE QLOCAL(NOPE)")
    assert [r.ok for r in results] == [True, True, False]
    assert results[1].objects == [{"QUEUE": "EMB.Q", "TYPE": "QLOCAL", "MAXDEPTH": 3}]
    assert results[2].reason == C.MQRC_UNKNOWN_OBJECT_NAME


def command_queue_get(client: Client, value: int) -> None:
    """MQSET InhibitGet on the command queue, as any application may (not through it)."""
    q = client.open("SYSTEM.ADMIN.COMMAND.QUEUE", options=C.MQOO_SET)
    q.set({C.MQIA_INHIBIT_GET: value})
    q.close()


def test_get_disabled_idles_the_command_server_and_enabling_revives_it(client: Client) -> None:
    cc = CommandClient(client, wait=10.0)
    disable = Command(F.MQCMD_CHANGE_Q, {C.MQCA_Q_NAME: "SYSTEM.ADMIN.COMMAND.QUEUE", C.MQIA_Q_TYPE: C.MQQT_LOCAL,
                                         C.MQIA_INHIBIT_GET: C.MQQA_GET_INHIBITED})
    assert [r.reason for r in cc.run(disable)] == [0]
    waiting = CommandClient(client, wait=0.5)
    with pytest.raises(MQError) as exc:
        waiting.run(Command(F.MQCMD_PING_Q_MGR))  # queued, not answered while gets are inhibited
    assert exc.value.reason == C.MQRC_NO_MSG_AVAILABLE
    command_queue_get(client, C.MQQA_GET_ALLOWED)  # the command server notices on its next tick
    assert cc.run(Command(F.MQCMD_PING_Q_MGR))[0].comp == C.MQCC_OK
    late = waiting.reply.get(10.0)  # the request queued meanwhile was served too
    assert P.PCFMessage.unpack(late.data, late.md.encoding).header.comp_code == C.MQCC_OK
    # Disabled while it waits (by MQSET): the next request ends that wait; enabling revives it again.
    command_queue_get(client, C.MQQA_GET_INHIBITED)
    with pytest.raises(MQError):
        waiting.run(Command(F.MQCMD_PING_Q_MGR))
    command_queue_get(client, C.MQQA_GET_ALLOWED)
    assert cc.run(Command(F.MQCMD_PING_Q_MGR))[0].comp == C.MQCC_OK
    cc.close()
    waiting.close()
