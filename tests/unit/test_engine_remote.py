"""Name resolution to transmission queues (engine.remote, engine.routing) and the message a
remote put leaves there: a byte-exact MQXQH before the data, under a descriptor of its own."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from engine_helpers import Env

from ferrymq.engine.api import FakeClock, ObjectDescriptor, PutOptions, PutRequest
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import MQXQH, pack_xmit, unpack_xmit

GET_ALL = C.MQGMO_NO_WAIT


def xmitq(env: Env, name: str, **attrs: object) -> None:
    env.qm.objects.define("QLOCAL", name, {"USAGE": "XMITQ", **attrs})


def remote(env: Env, name: str, **attrs: object) -> None:
    env.qm.objects.define("QREMOTE", name, attrs)


def open_out(env: Env, name: str, qmgr: str = "", options: int = C.MQOO_OUTPUT):  # type: ignore[no-untyped-def]
    return env.qm.open(env.hconn, ObjectDescriptor(object_name=name, object_q_mgr_name=qmgr), options)


def refused(env: Env, name: str, qmgr: str = "", options: int = C.MQOO_OUTPUT) -> int:
    """MQOPEN's reason; the refused call leaves no handle and no open count behind."""
    before = ({n: (q.output_count, q.input_count, len(q.handles)) for n, q in env.qm.objects.queues.items()},
              len(env.qm.state.handles))
    with pytest.raises(MQError) as e:
        open_out(env, name, qmgr, options)
    after = ({n: (q.output_count, q.input_count, len(q.handles)) for n, q in env.qm.objects.queues.items()},
             len(env.qm.state.handles))
    assert after == before
    assert e.value.comp == C.MQCC_FAILED
    return e.value.reason


def only_message(env: Env, queue: str) -> tuple[MQMD, bytes]:
    h = env.open(queue, C.MQOO_INPUT_AS_Q_DEF)
    got = env.get(h, GET_ALL)
    env.qm.close(env.hconn, h)
    return got.md, got.data


def test_object_qmgr_name_resolves_to_the_transmission_queue_of_that_name() -> None:
    env = Env()
    xmitq(env, "QM2")
    opened = open_out(env, "APP.IN", "QM2")
    assert (opened.resolved_q_name, opened.resolved_q_mgr_name) == ("APP.IN", "QM2")
    put = env.put(opened.hobj, b"hello", format="MQSTR", correl_id=b"C" * 24, reply_to_q="R.Q")
    assert (put.resolved_q_name, put.resolved_q_mgr_name) == ("APP.IN", "QM2")
    assert env.depth("QM2") == 1
    md, data = only_message(env, "QM2")
    # the transmission queue's own descriptor, as IBM builds it
    assert md.pack()[32:40] == b"MQXMIT  " and (md.encoding, md.coded_char_set_id) == (C.MQENC_NATIVE, 1208)
    assert (md.msg_id, md.correl_id, md.reply_to_q.strip(), md.reply_to_q_mgr.strip()) == (
        put.md.msg_id, b"C" * 24, "R.Q", "QM1")
    assert md.backout_count == 0 and md.user_identifier.strip() == "tester"
    # the MQXQH, byte by byte at the spec's offsets (ibmmq-reference.md §4.2), native (little-endian)
    assert data[0:4] == b"XQH " and struct.unpack_from("<i", data, 4)[0] == C.MQXQH_VERSION_1
    assert data[8:56].rstrip(b" \0") == b"APP.IN" and len(data[8:56]) == 48
    assert data[56:104].rstrip(b" \0") == b"QM2"
    assert data[104:108] == b"MD  " and struct.unpack_from("<i", data, 108)[0] == C.MQMD_VERSION_1
    assert data[136:144] == b"MQSTR   "  # embedded Format: the original's
    assert data[152:176] == put.md.msg_id and data[176:200] == b"C" * 24
    assert data[C.MQXQH_LENGTH_1:] == b"hello"
    header, original, at = unpack_xmit(data)
    assert (header.remote_q_name, header.remote_q_mgr_name, at) == ("APP.IN", "QM2", C.MQXQH_LENGTH_1)
    assert original.pack(version=1) == put.md.pack(version=1)


def test_the_mqxqh_in_both_byte_orders_and_an_mqmde_for_version_2_fields() -> None:
    env = Env()
    xmitq(env, "QM2")
    h = open_out(env, "APP.IN", "QM2").hobj
    put = env.put(h, b"part", version=2, group_id=b"G" * 24, msg_seq_number=3, format="MQSTR")
    _, data = only_message(env, "QM2")
    assert data[136:144] == b"MQHMDE  "  # the MQMDE after the header keeps the v2 fields
    assert data[C.MQXQH_LENGTH_1:C.MQXQH_LENGTH_1 + 4] == b"MDE "
    _, original, at = unpack_xmit(data)
    assert (original.group_id, original.msg_seq_number, original.format.strip()) == (b"G" * 24, 3, "MQSTR")
    assert data[at:] == b"part" and at == C.MQXQH_LENGTH_1 + C.MQMDE_LENGTH_2
    # the same header big-endian: the integers swap, the characters stay
    little = pack_xmit("APP.IN", "QM2", put.md)
    big = pack_xmit("APP.IN", "QM2", put.md, big_endian=True)
    assert struct.unpack_from(">i", big, 4)[0] == 1 and big[8:104] == little[8:104]
    assert struct.unpack_from(">i", big, 108)[0] == 1 and big[152:200] == little[152:200]
    assert MQXQH.unpack_from(big).remote_q_mgr_name == "QM2"


def test_default_transmission_queue_and_the_reasons_on_the_way() -> None:
    env = Env()
    assert refused(env, "APP.IN", "QM2") == C.MQRC_UNKNOWN_REMOTE_Q_MGR
    env.qm.objects.alter_qmgr({"DEFXMITQ": "NOPE"})
    assert refused(env, "APP.IN", "QM2") == C.MQRC_UNKNOWN_DEF_XMIT_Q
    env.qm.objects.define("QALIAS", "ALIASQ", {"TARGET": "SYSTEM.DEFAULT.LOCAL.QUEUE"})
    env.qm.objects.alter_qmgr({"DEFXMITQ": "ALIASQ"})
    assert refused(env, "APP.IN", "QM2") == C.MQRC_DEF_XMIT_Q_TYPE_ERROR
    env.define("PLAIN")
    env.qm.objects.alter_qmgr({"DEFXMITQ": "PLAIN"})
    assert refused(env, "APP.IN", "QM2") == C.MQRC_DEF_XMIT_Q_USAGE_ERROR
    xmitq(env, "DEFAULT.XQ")
    env.qm.objects.alter_qmgr({"DEFXMITQ": "DEFAULT.XQ"})
    h = open_out(env, "APP.IN", "QM2").hobj
    env.put(h, b"x")
    assert env.depth("DEFAULT.XQ") == 1 and env.depth("PLAIN") == 0
    # a local queue named like the queue manager is used before DEFXMITQ, and must be one
    env.define("QM3")
    assert refused(env, "APP.IN", "QM3") == C.MQRC_XMIT_Q_USAGE_ERROR
    env.qm.objects.define("QALIAS", "QM4", {"TARGET": "PLAIN"})
    assert refused(env, "APP.IN", "QM4") == C.MQRC_XMIT_Q_TYPE_ERROR
    # this queue manager's own name is local
    env.define("APP.IN")
    assert open_out(env, "APP.IN", "QM1").resolved_q_mgr_name == "QM1"


def test_remote_queue_definitions() -> None:
    env = Env()
    xmitq(env, "TO.QM2")
    xmitq(env, "QM2")
    remote(env, "R.EXPLICIT", RNAME="APP.IN", RQMNAME="QM2", XMITQ="TO.QM2", DEFPRTY=7, DEFPSIST="YES")
    remote(env, "R.BYNAME", RNAME="APP.OTHER", RQMNAME="QM2")
    opened = open_out(env, "R.EXPLICIT")
    assert (opened.object_name, opened.resolved_q_name, opened.resolved_q_mgr_name) == ("R.EXPLICIT", "APP.IN", "QM2")
    env.put(opened.hobj, b"a")  # priority and persistence as the remote definition says
    md, data = only_message(env, "TO.QM2")
    assert (md.priority, md.persistence) == (7, C.MQPER_PERSISTENT)
    assert MQXQH.unpack_from(data).remote_q_name == "APP.IN"
    env.put(open_out(env, "R.BYNAME").hobj, b"b")
    _, data = only_message(env, "QM2")
    assert (MQXQH.unpack_from(data).remote_q_name, MQXQH.unpack_from(data).remote_q_mgr_name) == ("APP.OTHER", "QM2")
    # an alias of a remote queue definition
    env.qm.objects.define("QALIAS", "A.REMOTE", {"TARGET": "R.EXPLICIT"})
    assert open_out(env, "A.REMOTE").resolved_q_mgr_name == "QM2"
    # RQMNAME naming this queue manager: RNAME is a local queue
    env.define("LOCAL.Q")
    remote(env, "R.HERE", RNAME="LOCAL.Q", RQMNAME="QM1")
    opened = open_out(env, "R.HERE")
    env.put(opened.hobj, b"c")
    assert env.depth("LOCAL.Q") == 1 and opened.resolved_q_name == "LOCAL.Q"


def test_remote_definition_reasons() -> None:
    env = Env()
    env.define("PLAIN")
    env.qm.objects.define("QALIAS", "ALIASQ", {"TARGET": "PLAIN"})
    remote(env, "R.NOXQ", RNAME="X", RQMNAME="QM2", XMITQ="MISSING")
    remote(env, "R.ALIASXQ", RNAME="X", RQMNAME="QM2", XMITQ="ALIASQ")
    remote(env, "R.PLAINXQ", RNAME="X", RQMNAME="QM2", XMITQ="PLAIN")
    remote(env, "R.QMALIAS", RQMNAME="QM2", XMITQ="PLAIN")
    remote(env, "R.NOQM", RNAME="X")
    remote(env, "R.NOROUTE", RNAME="X", RQMNAME="QM9")
    assert refused(env, "R.NOXQ") == C.MQRC_UNKNOWN_XMIT_Q
    assert refused(env, "R.ALIASXQ") == C.MQRC_XMIT_Q_TYPE_ERROR
    assert refused(env, "R.PLAINXQ") == C.MQRC_XMIT_Q_USAGE_ERROR
    assert refused(env, "R.QMALIAS") == C.MQRC_REMOTE_Q_NAME_ERROR
    assert refused(env, "R.NOQM") == C.MQRC_UNKNOWN_REMOTE_Q_MGR
    assert refused(env, "R.NOROUTE") == C.MQRC_UNKNOWN_REMOTE_Q_MGR
    assert refused(env, "NOT.DEFINED") == C.MQRC_UNKNOWN_OBJECT_NAME
    assert refused(env, "   ", "QM2") == C.MQRC_UNKNOWN_OBJECT_NAME


@pytest.mark.parametrize("options", [C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT, C.MQOO_BROWSE, C.MQOO_SET | C.MQOO_OUTPUT,
                                     C.MQOO_INPUT_EXCLUSIVE, C.MQOO_INQUIRE | C.MQOO_BROWSE])
def test_remote_queues_open_for_output_only(options: int) -> None:
    env = Env()
    xmitq(env, "QM2")
    env.define("LOCAL.Q")
    remote(env, "R.Q", RNAME="APP.IN", RQMNAME="QM2")
    remote(env, "R.HERE", RNAME="LOCAL.Q", RQMNAME="QM1")
    assert refused(env, "APP.IN", "QM2", options) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    assert refused(env, "R.Q", "", options) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    assert refused(env, "R.HERE", "", options) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    remote(env, "QM1.ALIAS", RQMNAME="QM1")  # a queue-manager alias back to this queue manager
    assert refused(env, "LOCAL.Q", "QM1.ALIAS", options) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    assert refused(env, "LOCAL.Q", "QM1.ALIAS", C.MQOO_INQUIRE) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE


def test_a_local_definition_opens_to_inquire_on_its_own_attributes() -> None:
    env = Env()
    xmitq(env, "QM2")
    remote(env, "R.Q", RNAME="APP.IN", RQMNAME="QM2", DEFPRTY=6)
    assert refused(env, "APP.IN", "QM2", C.MQOO_INQUIRE) == C.MQRC_OPTION_NOT_VALID_FOR_TYPE
    h = open_out(env, "R.Q", "", C.MQOO_INQUIRE | C.MQOO_OUTPUT).hobj
    got = env.qm.inquire(env.hconn, h, [C.MQIA_Q_TYPE, C.MQIA_DEF_PRIORITY], [C.MQCA_REMOTE_Q_MGR_NAME])
    assert (got.ints, [c.rstrip() for c in got.chars], got.reason) == ([C.MQQT_REMOTE, 6], ["QM2"], 0)


def test_queue_manager_aliases() -> None:
    env = Env()
    xmitq(env, "TO.QM2")
    xmitq(env, "QM2")
    remote(env, "QM2.VIA", RQMNAME="QM2", XMITQ="TO.QM2")  # blank RNAME: a queue-manager alias
    remote(env, "QM2.BYNAME", RQMNAME="QM2")
    remote(env, "QM1.ALIAS", RQMNAME="QM1")
    opened = open_out(env, "APP.IN", "QM2.VIA")
    assert (opened.resolved_q_name, opened.resolved_q_mgr_name) == ("APP.IN", "QM2")
    env.put(opened.hobj, b"x")
    _, data = only_message(env, "TO.QM2")
    assert MQXQH.unpack_from(data).remote_q_mgr_name == "QM2"
    env.put(open_out(env, "APP.IN", "QM2.BYNAME").hobj, b"y")
    assert env.depth("QM2") == 1
    env.define("APP.IN")
    env.put(open_out(env, "APP.IN", "QM1.ALIAS").hobj, b"z")  # back to this queue manager
    assert env.depth("APP.IN") == 1
    assert refused(env, "NOT.HERE", "QM1.ALIAS") == C.MQRC_UNKNOWN_OBJECT_NAME


def test_reply_to_alias_is_resolved_at_put_through_the_memo_too() -> None:
    env = Env()
    env.define("APP.IN")
    remote(env, "MY.REPLIES", RNAME="REAL.REPLIES", RQMNAME="QM7")
    remote(env, "HERE.REPLIES", RNAME="LOCAL.REPLIES")
    h = open_out(env, "APP.IN").hobj
    for _ in range(3):  # the second and third go through the handle's put memo
        put = env.put(h, b"q", reply_to_q="MY.REPLIES")
        assert (put.md.reply_to_q.strip(), put.md.reply_to_q_mgr.strip()) == ("REAL.REPLIES", "QM7")
    assert env.put(h, b"q", reply_to_q="HERE.REPLIES").md.reply_to_q_mgr.strip() == "QM1"
    kept = env.put(h, b"q", reply_to_q="MY.REPLIES", reply_to_q_mgr="QM5")  # another queue manager's name
    assert (kept.md.reply_to_q.strip(), kept.md.reply_to_q_mgr.strip()) == ("MY.REPLIES", "QM5")
    env.qm.objects.alter("MY.REPLIES", {"RQMNAME": "QM8"})  # a change moves the epoch: the memo follows
    assert env.put(h, b"q", reply_to_q="MY.REPLIES").md.reply_to_q_mgr.strip() == "QM8"
    for _ in range(5):
        env.get(env.open("APP.IN", C.MQOO_INPUT_AS_Q_DEF), GET_ALL)


def test_remote_put_under_syncpoint_put1_and_limits() -> None:
    env = Env()
    xmitq(env, "QM2", MAXMSGL=500)
    h = open_out(env, "APP.IN", "QM2").hobj
    env.put(h, b"x" * 10, pmo=C.MQPMO_SYNCPOINT, persistence=C.MQPER_PERSISTENT)
    q = env.qm.objects.require("QM2")
    assert (len(q.messages), q.messages.uncommitted) == (0, 1)
    env.qm.commit(env.hconn)
    assert env.depth("QM2") == 1
    env.qm.put1(env.hconn, ObjectDescriptor(object_name="OTHER", object_q_mgr_name="QM2"), MQMD(), PutOptions(0), b"p1")
    assert env.depth("QM2") == 2
    # the transmission queue's MAXMSGL counts the header: 428 + 100 > 500
    with pytest.raises(MQError) as e:
        env.put(h, b"y" * 100)
    assert e.value.reason == C.MQRC_MSG_TOO_BIG_FOR_Q and env.depth("QM2") == 2
    remote(env, "R.OFF", RNAME="A", RQMNAME="QM2", PUT="DISABLED")
    off = open_out(env, "R.OFF").hobj
    with pytest.raises(MQError) as e:
        env.put(off, b"z")
    assert e.value.reason == C.MQRC_PUT_INHIBITED and env.depth("QM2") == 2
    # through an alias of it, the remote definition's PUT still counts; then the queue's
    env.qm.objects.define("QALIAS", "A.OFF", {"TARGET": "R.OFF"})
    with pytest.raises(MQError) as e:
        env.put(open_out(env, "A.OFF").hobj, b"z")
    assert e.value.reason == C.MQRC_PUT_INHIBITED and env.depth("QM2") == 2
    env.qm.objects.alter("R.OFF", {"PUT": "ENABLED"})
    env.qm.objects.alter("QM2", {"PUT": "DISABLED"})
    with pytest.raises(MQError) as e:
        env.put(open_out(env, "A.OFF").hobj, b"z")
    assert e.value.reason == C.MQRC_PUT_INHIBITED and env.depth("QM2") == 2


def test_a_run_of_puts_to_a_remote_queue_wraps_each_message() -> None:
    env = Env()
    xmitq(env, "QM2", MAXMSGL=C.MQXQH_LENGTH_1 + 5)
    h = open_out(env, "APP.IN", "QM2").hobj
    done = env.qm.put_request(PutRequest(env.hconn, h, MQMD(), C.MQPMO_NO_SYNCPOINT | C.MQPMO_NEW_MSG_ID, b"",
                                         datas=[b"one", b"two", b"toolong"]))
    assert (done.resolved_q_name, done.resolved_q_mgr_name) == ("APP.IN", "QM2")
    assert done.outcomes is not None and done.outcomes[:2] == [None, None]
    assert isinstance(done.outcomes[2], MQError) and done.outcomes[2].reason == C.MQRC_MSG_TOO_BIG_FOR_Q
    hin = env.open("QM2", C.MQOO_INPUT_AS_Q_DEF)
    bodies = [unpack_xmit(env.get(hin, GET_ALL).data) for _ in range(2)]
    assert [(x.remote_q_name, data_at) for x, _, data_at in bodies] == [("APP.IN", C.MQXQH_LENGTH_1)] * 2
    assert env.depth("QM2") == 0


def test_no_confirmation_of_arrival_on_the_transmission_queue() -> None:
    env = Env()
    xmitq(env, "QM2")
    env.define("REPLIES")
    h = open_out(env, "APP.IN", "QM2").hobj
    env.put(h, b"x", report=C.MQRO_COA | C.MQRO_COD, reply_to_q="REPLIES")
    assert env.depth("REPLIES") == 0
    md, data = only_message(env, "QM2")  # the agent's get makes no COD either
    assert env.depth("REPLIES") == 0 and md.report == 0
    assert MQXQH.unpack_from(data).msg_desc.report == C.MQRO_COA | C.MQRO_COD  # the destination's to make


def test_a_direct_put_to_a_transmission_queue_needs_an_mqxqh() -> None:
    env = Env()
    xmitq(env, "QM2")
    h = env.open("QM2", C.MQOO_OUTPUT)
    for _ in range(2):
        with pytest.raises(MQError) as e:
            env.put(h, b"no header here")
        assert e.value.reason == C.MQRC_XQH_ERROR and env.depth("QM2") == 0
    header = pack_xmit("APP.IN", "QM2", MQMD(format="MQSTR"))
    for _ in range(2):
        env.put(h, header + b"body", format=C.MQFMT_XMIT_Q_HEADER)
    assert env.depth("QM2") == 2


def test_definitions_and_queued_messages_survive_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    qm = QueueManager.start("QM1", FileJournal(tmp_path / "j"), clock)
    qm.objects.define("QLOCAL", "QM2", {"USAGE": "XMITQ"})
    qm.objects.define("QREMOTE", "R.Q", {"RNAME": "APP.IN", "RQMNAME": "QM2", "DESCR": "to QM2", "SCOPE": "CELL"})
    qm.objects.alter("R.Q", {"DEFPSIST": "YES"})
    qm.objects.alter_qmgr({"DEFXMITQ": "QM2"})
    hconn = qm.connect()
    h = qm.open(hconn, ObjectDescriptor(object_name="R.Q"), C.MQOO_OUTPUT).hobj
    qm.put(hconn, h, MQMD(), PutOptions(0), b"kept")
    before = qm.objects.require("R.Q")
    attrs = dict(before.attrs)
    qm.journal.sync()
    qm.journal.close()
    qm2 = QueueManager.start("QM1", FileJournal(tmp_path / "j"), FakeClock(clock.now() + 60))
    after = qm2.objects.require("R.Q")
    assert (after.qtype, after.attrs, after.created) == ("QREMOTE", attrs, before.created)
    assert qm2.objects.display_qmgr()["DEFXMITQ"] == "QM2"
    hconn2 = qm2.connect()
    opened = qm2.open(hconn2, ObjectDescriptor(object_name="R.Q"), C.MQOO_OUTPUT)
    assert opened.resolved_q_mgr_name == "QM2"
    q = qm2.objects.require("QM2")
    assert q.messages.depth == 1
    qm2.journal.close()


def test_reports_for_a_remote_reply_to_qmgr_go_through_its_transmission_queue() -> None:
    env = Env()
    xmitq(env, "QM2")
    env.define("APP.Q")
    h = env.open("APP.Q")
    sent = env.put(h, b"request", report=C.MQRO_COA | C.MQRO_COD, reply_to_q="REPLIES", reply_to_q_mgr="QM2",
                   persistence=C.MQPER_PERSISTENT)
    env.get(h)  # the COD
    assert env.depth("QM2") == 2 and env.depth("SYSTEM.DEAD.LETTER.QUEUE") == 0
    hx = env.open("QM2", C.MQOO_INPUT_AS_Q_DEF)
    for feedback in (C.MQFB_COA, C.MQFB_COD):
        got = env.get(hx, GET_ALL)
        xqh, md, _ = unpack_xmit(got.data)
        assert (xqh.remote_q_name.strip(), xqh.remote_q_mgr_name.strip()) == ("REPLIES", "QM2")
        assert (md.msg_type, md.feedback, md.correl_id) == (C.MQMT_REPORT, feedback, sent.md.msg_id)
        assert got.md.format.strip() == "MQXMIT"
    # no route to the queue manager: the dead-letter queue, as before
    env.put(h, b"again", report=C.MQRO_COA, reply_to_q="REPLIES", reply_to_q_mgr="NOWHERE")
    assert env.depth("SYSTEM.DEAD.LETTER.QUEUE") == 1
