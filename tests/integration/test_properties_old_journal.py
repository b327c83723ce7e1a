"""A journal written before puts refused text UTF-8 cannot encode (issue 24): records holding
a string property with a lone surrogate, written straight into the file journal of a
stopped queue manager, on the command queue and on an application queue. A real
``ferrymq start`` (127.0.0.1, port 0) comes up, the command server serves on, and a getter
receives the message with MQRC_PROP_VALUE_NOT_CONVERTED, then the one behind it."""

from __future__ import annotations

from pathlib import Path

import pytest
from qm_process import ADMIN_USER, QueueManagerProcess

from ferrymq.client.sync import connect
from ferrymq.engine.api import SystemClock
from ferrymq.engine.message import KIND_MESSAGE, Message
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.pcf.messages import from_command
from ferrymq.pcf.model import Command
from ferrymq.properties.model import PropertySet
from ferrymq.properties.rfh2map import folder_properties
from ferrymq.store.file import FileJournal
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.rfh2 import unpack_chain

pytestmark = pytest.mark.timeout(120)

LONE = "a\ud800b"


def write_old_records(home: Path) -> None:
    journal = FileJournal(home / "qmgrs" / "QM1" / "journal")
    qm = QueueManager.start("QM1", journal, SystemClock())
    for name, attrs in (("OLD.FORCE", {"PROPCTL": C.MQPROP_FORCE_MQRFH2}), ("OLD.REPLY", {})):
        if qm.objects.find(name) is None:
            qm.objects.define("QLOCAL", name, attrs)

    def record(queue: str, md: MQMD, data: bytes, props: PropertySet | None) -> None:
        q = qm.objects.require(queue)
        msg = Message(queue, qm.next_sequence(q), md, data, qm.clock.now(), False)
        msg.properties = props
        journal.add(qm.new_record_id(), KIND_MESSAGE, msg.encode())  # no put's checks

    ping = from_command(Command(F.MQCMD_PING_Q_MGR)).pack()
    request = MQMD(msg_type=C.MQMT_REQUEST, format=C.MQFMT_ADMIN, reply_to_q="OLD.REPLY",
                   persistence=C.MQPER_PERSISTENT, priority=0, encoding=P.NATIVE,
                   user_identifier=ADMIN_USER)  # the command is checked as its sender's (an administrator)
    record("SYSTEM.ADMIN.COMMAND.QUEUE", request, ping, PropertySet({"bad": LONE}))
    record("SYSTEM.ADMIN.COMMAND.QUEUE", request, ping, None)
    plain = MQMD(format=C.MQFMT_STRING, persistence=C.MQPER_PERSISTENT, priority=0)
    record("OLD.FORCE", plain, b"old", PropertySet({"colour": LONE}))
    record("OLD.FORCE", plain, b"behind", PropertySet({"colour": "red"}))
    qm.take_sync_lsn()
    journal.sync()
    journal.close()


def test_a_start_on_records_an_older_version_wrote(tmp_path: Path) -> None:
    qmp = QueueManagerProcess(tmp_path / "home")
    try:
        write_old_records(qmp.home)
        qmp.start()  # once exit 71 (start_failed: UnicodeEncodeError from the command server's get)
        assert "DEADQ(" in qmp.mqsc("DISPLAY QMGR DEADQ\n")  # the command server answers
        c = connect("QM1", qmp.conn_name, appl_name="checker")
        try:
            replies = c.open("OLD.REPLY")
            answered = [replies.get(10.0) for _ in range(2)]  # both requests were served
            assert P.PCFMessage.unpack(answered[-1].data, answered[-1].md.encoding).header.comp_code == C.MQCC_OK
            q = c.open("OLD.FORCE")
            old = q.get()  # before: MQRC_CONNECTION_BROKEN, and again on every try
            assert old.reason == C.MQRC_PROP_VALUE_NOT_CONVERTED
            headers, end, _, _ = unpack_chain(old.data, old.md.format, old.md.encoding)
            assert folder_properties(headers[0].folders[0]) == {"colour": "a\ufffdb"}
            assert old.data[end:] == b"old"
            behind = q.get()  # no message stays first on the queue
            assert behind.reason == C.MQRC_NONE and behind.data.endswith(b"behind")
        finally:
            c.disconnect()
    finally:
        qmp.stop()
