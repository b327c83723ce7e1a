"""A real queue-manager process (``ferrymq create/start``, 127.0.0.1 port 0) whose command
queue holds what the command server cannot serve, or is GET(DISABLED), when it starts:
the start succeeds and the command server answers MQSC as soon as it can."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from qm_process import ADMIN_USER, QueueManagerProcess

from ferrymq.client.sync import connect
from ferrymq.engine.api import ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command
from ferrymq.store.file import FileJournal
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

pytestmark = pytest.mark.timeout(120)

PING = from_command(Command(F.MQCMD_PING_Q_MGR)).pack()
TRUNCATED = from_command(Command(F.MQCMD_INQUIRE_Q, {C.MQCA_Q_NAME: "SYSTEM.*"})).pack()[:45]
# An MQCFH promising 2**31-1 parameters, then an MQCFIL promising 2**31-1 values.
ABSURD = struct.pack(">9i", F.MQCFT_COMMAND, 36, 1, F.MQCMD_INQUIRE_Q, 1, 1, 0, 0, 2**31 - 1) + struct.pack(
    ">4i", F.MQCFT_INTEGER_LIST, 16 + 8, F.MQIACF_Q_ATTRS, 2**31 - 1) + b"\0" * 8


def put_poison(home: Path) -> int:
    """Persistent requests the command server cannot serve, put through the engine on the
    stopped queue manager's journal, then one it can; the number of replies due."""
    journal = FileJournal(home / "qmgrs" / "QM1" / "journal")
    qm = QueueManager.start("QM1", journal, SystemClock())
    qm.state.authority.superusers.add(ADMIN_USER)  # in this process, as the server has it in its registry
    hconn = qm.connect(appl_name="poisoner", user=ADMIN_USER)  # the requests are an administrator's
    if qm.objects.find("POISON.REPLY") is None:
        qm.objects.define("QLOCAL", "POISON.REPLY")
    od = ObjectDescriptor(object_name="SYSTEM.ADMIN.COMMAND.QUEUE")
    pmo = PutOptions(C.MQPMO_NO_SYNCPOINT)

    def put(data: bytes, props: dict[str, object] | None = None, fmt: str = C.MQFMT_ADMIN) -> None:
        md = MQMD(msg_type=C.MQMT_REQUEST, format=fmt, reply_to_q="POISON.REPLY", persistence=C.MQPER_PERSISTENT,
                  encoding=P.NATIVE)
        qm.put1(hconn, od, md, pmo, data, properties=props)

    replies = 0
    try:  # a property no codec can write; MQPUT may refuse it (then older journals still hold such)
        put(PING, {"bad": "\ud800"})
        replies += 1
    except MQError:
        pass
    for data, fmt in ((TRUNCATED, C.MQFMT_ADMIN), (ABSURD, C.MQFMT_ADMIN), (b"\xff" * 7, C.MQFMT_STRING),
                      (PING, C.MQFMT_ADMIN)):
        put(data, fmt=fmt)
        replies += 1
    qm.take_sync_lsn()
    journal.sync()
    journal.close()
    return replies


def replies_on(qmp: QueueManagerProcess, due: int) -> list[tuple[int, int]]:
    c = connect("QM1", qmp.conn_name, appl_name="checker")
    try:
        q = c.open("POISON.REPLY")
        out = []
        for _ in range(due):
            got = q.get(10.0)
            hdr = P.PCFMessage.unpack(got.data, got.md.encoding).header
            out.append((hdr.comp_code, hdr.reason))
        return out
    finally:
        c.disconnect()


def test_no_message_on_the_command_queue_stops_a_start(tmp_path: Path) -> None:
    qmp = QueueManagerProcess(tmp_path / "home")
    try:
        due = put_poison(qmp.home)
        qmp.start()  # before: exit 71, the command server's first get ran inside start
        assert "DEADQ(SYSTEM.DEAD.LETTER.QUEUE)" in qmp.mqsc("DISPLAY QMGR DEADQ\n")
        got = replies_on(qmp, due)
        assert got[-1] == (C.MQCC_OK, 0)  # the good request behind them
        assert {(C.MQCC_FAILED, F.MQRCCF_STRUCTURE_TYPE_ERROR), (C.MQCC_FAILED, F.MQRCCF_MD_FORMAT_ERROR)} <= set(got)
    finally:
        qmp.stop()


def test_a_restart_with_the_command_queue_get_disabled_resumes_when_enabled(tmp_path: Path) -> None:
    qmp = QueueManagerProcess(tmp_path / "home").start()
    try:
        qmp.mqsc("ALTER QLOCAL(SYSTEM.ADMIN.COMMAND.QUEUE) GET(DISABLED)\n")
        qmp.stop()
        qmp.start()
        c = connect("QM1", qmp.conn_name, appl_name="operator")
        try:
            q = c.open("SYSTEM.ADMIN.COMMAND.QUEUE", options=C.MQOO_SET | C.MQOO_INQUIRE)
            assert q.inquire(C.MQIA_INHIBIT_GET)[C.MQIA_INHIBIT_GET] == C.MQQA_GET_INHIBITED
            q.set({C.MQIA_INHIBIT_GET: C.MQQA_GET_ALLOWED})  # MQSET: the command server cannot be asked
        finally:
            c.disconnect()
        out = qmp.mqsc("DISPLAY QLOCAL(SYSTEM.ADMIN.COMMAND.QUEUE) GET\n")
        assert "GET(ENABLED)" in out
    finally:
        qmp.stop()
