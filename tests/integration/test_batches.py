"""Batched frames over TCP: asynchronous puts leave as PutBatch frames and read-ahead
arrives as PushedBatch frames; each message keeps its own identity, order and outcome."""

from __future__ import annotations

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.client.sync import Queue


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def test_async_puts_and_read_ahead_deliver_every_message_in_order(embedded: EmbeddedQueueManager) -> None:
    n = 3000
    with fc.connect("QM1", addr(embedded.port)) as producer, fc.connect("QM1", addr(embedded.port)) as consumer:
        c = consumer.open("Q1", read_ahead=400)
        q: Queue = producer.open("Q1", async_put=True)
        sent = [q.put(b"%06d" % i, persistent=False).msg_id for i in range(n)]
        assert producer.stat().successes == n
        got = [c.get(wait=5) for _ in range(n)]
    assert [m.data for m in got] == [b"%06d" % i for i in range(n)]
    assert [m.msg_id for m in got] == sent  # the client-chosen MsgIds survive the batch
    assert len(set(sent)) == n


def test_each_item_of_a_batch_counts_for_stat(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(SMALL) MAXDEPTH(5)")
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("SMALL", async_put=True)
        for i in range(12):
            q.put(b"%d" % i, persistent=False)
        st = qm.stat()
        assert (st.successes, st.failures) == (5, 7)
        assert isinstance(st.first_error, fc.MQError) and st.first_error.reason == 2053  # MQRC_Q_FULL
        assert qm.open("SMALL").depth() == 5
        # the next batch starts afresh
        qm.open("SMALL").get(wait=1)
        q.put(b"again", persistent=False)
        assert qm.stat().successes == 1


def test_mixed_persistence_and_properties_keep_put_order(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("Q2", async_put=True)
        plan = [(b"a", False, None), (b"b", True, None), (b"c", False, {"k": 1}), (b"d", False, None),
                (b"e", False, None)]
        for body, persistent, props in plan:
            q.put(body, persistent=persistent, properties=props)
        assert qm.stat().successes == len(plan)
        r = qm.open("Q2", read_ahead=50)
        got = [r.get(wait=5) for _ in plan]
    assert [m.data for m in got] == [p[0] for p in plan]
    assert got[2].properties == {"k": 1} and got[3].properties in (None, {})


def test_a_version_1_client_is_refused_at_connect_naming_both_ranges(embedded: EmbeddedQueueManager) -> None:
    import socket

    from ferrymq.protocol import events as E
    from ferrymq.protocol.connection import NEED_DATA, ClientConnection

    c = ClientConnection()
    with socket.create_connection(("127.0.0.1", embedded.port)) as sock:
        sock.settimeout(10)
        sock.sendall(c.send(E.Connect(1, "QM1", min_version=1, max_version=1)))
        reply: object = NEED_DATA
        while reply is NEED_DATA:
            c.receive_data(sock.recv(65536))
            reply = c.next_event()
    assert isinstance(reply, E.ConnectReply)
    assert (reply.comp, reply.reason) == (2, 2012)  # MQRC_ENVIRONMENT_ERROR
    served = f"server {E.MIN_PROTOCOL_VERSION}..{E.PROTOCOL_VERSION}"
    assert f"client speaks versions 1..1; {served}" in reply.detail
    with fc.connect("QM1", addr(embedded.port)) as qm:  # the server serves everyone else
        qm.open("Q1").put(b"still here", persistent=False)


def test_get_batch_takes_in_order_under_a_unit_of_work(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(Q4)")
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("Q4")
        for i in range(10):
            q.put(b"%d" % i, persistent=bool(i % 2), properties={"i": i} if i == 3 else None)
        with qm.transaction():
            got = q.get_batch(4)
        assert [m.data for m in got] == [b"0", b"1", b"2", b"3"] and got[3].properties == {"i": 3}
        try:
            with qm.transaction():
                assert [m.data for m in q.get_batch(100, max_bytes=2)] == [b"4", b"5"]
                raise RuntimeError("back it out")
        except RuntimeError:
            pass
        assert [m.data for m in q.get_batch(100)] == [b"%d" % i for i in range(4, 10)]
        assert q.get_batch(10) == []
        assert q.get_batch(10, wait=0.2) == []


def test_get_batch_wait_ends_with_the_first_message(embedded: EmbeddedQueueManager) -> None:
    import threading

    embedded.mqsc("DEFINE QLOCAL(Q5)")
    with fc.connect("QM1", addr(embedded.port)) as qm, fc.connect("QM1", addr(embedded.port)) as other:
        q = qm.open("Q5")
        timer = threading.Timer(0.3, lambda: other.open("Q5").put(b"late", persistent=False))
        timer.start()
        try:
            got = q.get_batch(50, wait=10)
        finally:
            timer.join()
        assert [m.data for m in got] == [b"late"]


async def test_async_client_get_batch(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(Q6)")
    async with await fc.connect_async("QM1", addr(embedded.port)) as qm:
        q = await qm.open("Q6")
        for i in range(5):
            await q.put(b"%d" % i)
        got = await q.get_batch(3, syncpoint=True)
        await qm.backout()
        assert [m.data for m in got] == [b"0", b"1", b"2"]
        assert [m.data for m in await q.get_batch(10)] == [b"%d" % i for i in range(5)]
        assert await q.get_batch(10, wait=0.1) == []
