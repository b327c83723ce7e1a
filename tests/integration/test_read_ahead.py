"""Read-ahead sends only non-persistent messages ahead; persistent ones stay on the queue
until the application's own get reaches them, so a dropped connection cannot lose them."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.server import QueueManagerServer


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def browse_all(qm: fc.Client, name: str) -> list[bytes]:
    return [m.data for m in qm.open(name).browse()]


def wait_until(cond: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_persistent_messages_are_never_sent_ahead(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as producer, fc.connect("QM1", addr(embedded.port)) as consumer, \
            fc.connect("QM1", addr(embedded.port)) as observer:
        q = producer.open("Q1")
        for body, persistent in ((b"n1", False), (b"n2", False), (b"p3", True), (b"n4", False), (b"p5", True)):
            q.put(body, persistent=persistent)
        c = consumer.open("Q1", read_ahead=10)
        assert c.get(wait=2).data == b"n1"
        # n2 was pushed ahead; the push stopped at p3, which (with all after it) stays queued.
        wait_until(lambda: browse_all(observer, "Q1") == [b"p3", b"n4", b"p5"])
        assert c.get(wait=2).data == b"n2"
        assert c.get(wait=2).data == b"p3"  # an ordinary get, after which pushing resumes
        assert c.get(wait=2).data == b"n4"
        wait_until(lambda: browse_all(observer, "Q1") == [b"p5"])
        assert c.get(wait=2).data == b"p5"
        assert browse_all(observer, "Q1") == []
        with pytest.raises(fc.NoMessageAvailable):
            c.get(wait=0.2)


def test_priority_order_is_kept_around_a_persistent_message(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as producer, fc.connect("QM1", addr(embedded.port)) as consumer, \
            fc.connect("QM1", addr(embedded.port)) as observer:
        q = producer.open("Q2")
        q.put(b"p-low", persistent=True, priority=1)
        q.put(b"n-mid", persistent=False, priority=5)
        c = consumer.open("Q2", read_ahead=10)
        assert c.get(wait=2).data == b"n-mid"  # pushed; the push then stopped at p-low
        wait_until(lambda: browse_all(observer, "Q2") == [b"p-low"])
        q.put(b"n-high", persistent=False, priority=8)  # now ahead of the persistent one
        assert c.get(wait=2).data == b"n-high"
        assert c.get(wait=2).data == b"p-low"


def test_a_dropped_consumer_loses_no_persistent_message(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as producer:
        q = producer.open("Q3")
        for i in range(20):
            q.put(b"%d" % i, persistent=True)
    raw = socket.create_connection(("127.0.0.1", embedded.port))
    consumer = fc.Client(raw, qmgr="QM1")
    c = consumer.open("Q3", read_ahead=50)
    assert c.get(wait=2).data == b"0"
    raw.shutdown(socket.SHUT_RDWR)  # the connection drops with the read-ahead running
    raw.close()
    with fc.connect("QM1", addr(embedded.port)) as again:
        q = again.open("Q3")
        wait_until(lambda: q.depth() == 19)
        assert [int(m.data) for m in q.messages()] == list(range(1, 20))


async def test_async_client_gets_persistent_messages_in_order(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as p, await fc.connect_async("QM1", addr(server.port)) as c:
        qp = await p.open("Q1", async_put=True)
        qc = await c.open("Q1", read_ahead=8)
        for i in range(60):
            await qp.put(b"%d" % i, persistent=i % 7 == 3)
        got = [int((await qc.get(wait=5)).data) for _ in range(60)]
        assert got == list(range(60))
        assert (await p.stat()).failures == 0
        with pytest.raises(fc.NoMessageAvailable):
            await qc.get(wait=0.1)
        await asyncio.sleep(0)


def test_credit_is_returned_while_half_the_window_is_still_buffered(embedded: EmbeddedQueueManager) -> None:
    # A consumer that takes half its window must not hold the credit until its buffer is
    # empty: the server pushes the next half while the consumer works through the rest.
    with fc.connect("QM1", addr(embedded.port)) as producer, fc.connect("QM1", addr(embedded.port)) as consumer:
        q = producer.open("Q1")
        for i in range(40):
            q.put(b"%d" % i, persistent=False)
        c = consumer.open("Q1", read_ahead=10)
        assert c.get(wait=2).data == b"0"
        wait_until(lambda: q.depth() == 30)  # the window's ten were pushed
        assert [int(c.get(wait=2).data) for _ in range(4)] == [1, 2, 3, 4]  # half the window taken
        wait_until(lambda: q.depth() == 25)  # five more pushed, five still buffered
        assert [int(c.get(wait=2).data) for _ in range(35)] == list(range(5, 40))


async def test_async_credit_leaves_with_the_get_that_returns_it(embedded: EmbeddedQueueManager) -> None:
    # The consumer's loop does not yield between gets of buffered messages (here it blocks
    # outright): its credit must not wait for the event loop's next turn.
    with fc.connect("QM1", addr(embedded.port)) as producer:
        q = producer.open("Q1")
        for i in range(40):
            q.put(b"%d" % i, persistent=False)
        async with await fc.connect_async("QM1", addr(embedded.port)) as consumer:
            c = await consumer.open("Q1", read_ahead=10)
            assert (await c.get(wait=2)).data == b"0"
            wait_until(lambda: q.depth() == 30)
            assert [int((await c.get(wait=2)).data) for _ in range(4)] == [1, 2, 3, 4]
            wait_until(lambda: q.depth() == 25)  # the loop is blocked: the credit left already
            assert [int((await c.get(wait=2)).data) for _ in range(35)] == list(range(5, 40))
