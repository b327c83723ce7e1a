"""MQOD names longer than IBM's fields, sent as raw frames and through the clients.

IBM's MQOD holds 48 characters of ObjectName, ObjectQMgrName and DynamicQName and 12 of
AlternateUserId; our frames carry up to 65535 bytes in each. A longer name is refused with
the reason IBM gives for a name that names nothing, in a reply (not the 2195 internal error
a reply quoting a 65,535-byte name used to end the connection with), and the connection
goes on.
"""

from __future__ import annotations

import asyncio

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection
from ferrymq.server import QueueManagerServer
from ferrymq.wire.mqmd import MQMD

LONGEST = "Q" * 65535  # the longest a frame's string carries


class Raw:
    """A conversation spoken frame by frame, as a program other than our clients may."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.conn = ClientConnection()
        self.corr = 0

    @classmethod
    async def connect(cls, port: int, qmgr: str = "QM1") -> tuple[Raw, E.Event]:
        raw = cls(*await asyncio.open_connection("127.0.0.1", port))
        return raw, await raw.ask(E.Connect(raw.next(), qmgr))

    def next(self) -> int:
        self.corr += 1
        return self.corr

    async def ask(self, ev: E.ClientEvent) -> E.Event:
        self.writer.write(self.conn.send(ev))
        while True:
            got = self.conn.next_event()
            if got is not NEED_DATA:
                assert isinstance(got, E.Event)
                return got
            data = await asyncio.wait_for(self.reader.read(1 << 20), 10)
            self.conn.receive_data(data)

    def close(self) -> None:
        self.writer.close()


def refused(ev: E.Event, reason: int, limit: str) -> None:
    assert isinstance(ev, E.Reply), ev
    assert (ev.comp, ev.reason) == (C.MQCC_FAILED, reason)
    assert limit in ev.detail and len(ev.detail) < 200  # names the limit, does not quote the name


async def test_open_and_put1_with_names_longer_than_the_mqod_holds(server: QueueManagerServer) -> None:
    raw, hello = await Raw.connect(server.port)
    assert isinstance(hello, E.ConnectReply) and hello.comp == C.MQCC_OK
    try:
        out = C.MQOO_OUTPUT
        refused(await raw.ask(E.Open(raw.next(), LONGEST, out)), C.MQRC_UNKNOWN_OBJECT_NAME, "MQ_Q_NAME_LENGTH is 48")
        refused(await raw.ask(E.Open(raw.next(), "Q" * 49, out)), C.MQRC_UNKNOWN_OBJECT_NAME, "MQ_Q_NAME_LENGTH")
        refused(await raw.ask(E.Open(raw.next(), "Q1", out, object_q_mgr_name=LONGEST)),
                C.MQRC_UNKNOWN_OBJECT_Q_MGR, "MQ_Q_MGR_NAME_LENGTH is 48")
        refused(await raw.ask(E.Open(raw.next(), "SYSTEM.DEFAULT.MODEL.QUEUE", C.MQOO_INPUT_AS_Q_DEF,
                                     dynamic_q_name=LONGEST)),
                C.MQRC_DYNAMIC_Q_NAME_ERROR, "MQ_Q_NAME_LENGTH is 48")
        refused(await raw.ask(E.Open(raw.next(), "Q1", out | C.MQOO_ALTERNATE_USER_AUTHORITY,
                                     alternate_user_id=LONGEST)),
                C.MQRC_NOT_AUTHORIZED, "MQ_USER_ID_LENGTH is 12")
        refused(await raw.ask(E.Put1(raw.next(), LONGEST, MQMD(), b"m", C.MQPMO_NO_SYNCPOINT)),
                C.MQRC_UNKNOWN_OBJECT_NAME, "MQ_Q_NAME_LENGTH is 48")
        refused(await raw.ask(E.Put1(raw.next(), "Q1", MQMD(), b"m",
                                     C.MQPMO_NO_SYNCPOINT | C.MQPMO_ALTERNATE_USER_AUTHORITY,
                                     alternate_user_id="U" * 13)),
                C.MQRC_NOT_AUTHORIZED, "MQ_USER_ID_LENGTH is 12")
        # Trailing blanks pad IBM's fields: they do not count.
        opened = await raw.ask(E.Open(raw.next(), "Q1" + " " * 100, out, object_q_mgr_name=" " * 100))
        assert isinstance(opened, E.OpenReply) and opened.comp == C.MQCC_OK
        # The same conversation goes on; nothing was put.
        put = await raw.ask(E.Put(raw.next(), opened.hobj, MQMD(), b"after"))
        assert isinstance(put, E.PutReply) and put.comp == C.MQCC_OK
        assert server.qmgr.objects.queues["Q1"].messages.depth == 1
    finally:
        raw.close()


async def test_connect_to_a_longer_queue_manager_name_is_refused_with_2058(server: QueueManagerServer) -> None:
    raw, hello = await Raw.connect(server.port, qmgr="Q" * 60000)  # within the 64 KiB before Connect
    raw.close()
    assert isinstance(hello, E.ConnectReply)
    assert (hello.comp, hello.reason) == (C.MQCC_FAILED, C.MQRC_Q_MGR_NAME_ERROR)
    assert len(hello.detail.encode()) <= 4096  # the detail is cut, the reply still goes


@pytest.mark.parametrize("name", ["Q" * 49, LONGEST, "Q" * 70000])
def test_clients_refuse_a_long_name_with_the_queue_managers_reason(embedded: EmbeddedQueueManager, name: str) -> None:
    with fc.connect("QM1", f"127.0.0.1({embedded.port})") as c:
        with pytest.raises(fc.UnknownObjectName):
            c.open(name)
        with pytest.raises(fc.UnknownObjectName):
            c.put1(name, b"m")
        q = c.open("Q1")
        q.put(b"still connected")
        assert q.get().data == b"still connected"
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({embedded.port})")
    try:
        for call in (lambda: pymqi.Queue(qm, name, C.MQOO_OUTPUT), lambda: qm.put1(name, b"m")):
            with pytest.raises(MQError) as exc:
                call()
            assert exc.value.reason == C.MQRC_UNKNOWN_OBJECT_NAME
    finally:
        qm.disconnect()


@pytest.mark.parametrize("name", ["Q" * 49, "Q" * 70000])
async def test_clients_refuse_a_longer_queue_manager_name_with_2058(server: QueueManagerServer, name: str) -> None:
    """MQCONN's QMgrName is 48 characters: a longer one is no queue manager's (2058, as the
    server answers), not a 2009 from a frame that cannot carry it."""
    addr = f"127.0.0.1({server.port})"
    with pytest.raises(MQError) as exc:
        await fc.connect_async(name, addr)
    assert exc.value.reason == C.MQRC_Q_MGR_NAME_ERROR
    with pytest.raises(MQError) as exc:
        await asyncio.to_thread(fc.connect, name, addr)
    assert exc.value.reason == C.MQRC_Q_MGR_NAME_ERROR
    with pytest.raises(MQError) as exc:
        await asyncio.to_thread(pymqi.connect, name, "DEV.APP.SVRCONN", addr)
    assert exc.value.reason == C.MQRC_Q_MGR_NAME_ERROR
    async with await fc.connect_async("QM1" + " " * 60, addr) as c:  # trailing blanks pad the field
        assert c.qmgr_name == "QM1"
