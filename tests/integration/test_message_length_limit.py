"""A message or buffer over the connection's negotiated maximum message length.

IBM's client refuses an MQPUT, MQPUT1 or MQGET whose buffer is longer than the channel's
maximum with MQRC_DATA_LENGTH_ERROR (2010) and sends nothing: the connection is fine and
stays usable. It is not MQRC_CONNECTION_BROKEN (2009), which pymqi programs and our own
reconnect logic take as "reconnect". Checked for both clients and the pymqi layer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC
from ferrymq.server import QueueManagerServer

LIMIT = 10_000
BIG = b"x" * (LIMIT + 1)


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def refused(exc: pytest.ExceptionInfo[MQError]) -> None:
    assert (exc.value.comp, exc.value.reason) == (C.MQCC_FAILED, C.MQRC_DATA_LENGTH_ERROR)
    assert str(LIMIT) in str(exc.value)  # names the limit that refused it


@pytest.fixture
def client(embedded: EmbeddedQueueManager) -> Iterator[fc.Client]:
    with fc.connect("QM1", addr(embedded.port), max_msg_length=LIMIT, reconnect=True) as c:
        yield c


def test_sync_put_put1_and_async_put_are_refused_with_2010(client: fc.Client) -> None:
    q = client.open("Q1")
    qa = client.open("Q1", async_put=True)
    with pytest.raises(MQError) as exc:
        q.put(BIG)
    refused(exc)
    with pytest.raises(MQError) as exc:
        client.put1("Q1", BIG)
    refused(exc)
    qa.put(b"before")  # held for a batch with the puts after it
    with pytest.raises(MQError) as exc:
        qa.put(BIG)
    refused(exc)
    qa.put(b"after")
    assert client.stat().successes == 2
    with pytest.raises(MQError) as exc:
        client.open("Q1").put_columns((0).to_bytes(4, "big") + (LIMIT + 1).to_bytes(4, "big"), BIG)
    refused(exc)
    # The same connection goes on: nothing was reconnected, nothing else was put.
    q.put(b"x" * LIMIT)
    # A batch reply stays within the negotiated maximum too: the last one comes in a second batch.
    got = [m.data for m in q.get_batch(10)]
    got += [m.data for m in q.get_batch(10)]
    assert got == [b"before", b"after", b"x" * LIMIT]
    assert client.reconnects == 0


def test_sync_get_with_a_buffer_over_the_maximum_is_refused_with_2010(client: fc.Client,
                                                                      embedded: EmbeddedQueueManager) -> None:
    q = client.open("Q1")
    q.put(b"small")
    with pytest.raises(MQError) as exc:
        q.get(max_length=LIMIT + 1)
    refused(exc)
    with pytest.raises(MQError) as exc:
        next(iter(q.browse(max_length=LIMIT + 1)))
    refused(exc)
    assert q.get(max_length=LIMIT).data == b"small"  # still connected, the message still there
    with fc.connect("QM1", addr(embedded.port)) as wide:  # a message longer than our maximum
        wide.open("Q1").put(BIG)
    with pytest.raises(fc.Truncated) as trunc:
        q.get()
    assert trunc.value.reason == C.MQRC_TRUNCATED_MSG_FAILED
    assert len(q.get(accept_truncated=True).data) == LIMIT
    assert client.reconnects == 0


async def test_async_client_put_put1_batch_and_get(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port), max_msg_length=LIMIT) as c:
        q = await c.open("Q2")
        qa = await c.open("Q2", async_put=True)
        for call in (lambda: q.put(BIG), lambda: c.put1("Q2", BIG), lambda: qa.put(BIG),
                     lambda: q.get(max_length=LIMIT + 1)):
            with pytest.raises(MQError) as exc:
                await call()
            refused(exc)
        await qa.put(b"one")
        await qa.put(b"two")
        assert (await c.stat()).successes == 2
        assert [m.data for m in await q.get_batch(10)] == [b"one", b"two"]


def test_pymqi_put_put1_and_get(embedded: EmbeddedQueueManager) -> None:
    cd = pymqi.CD(ChannelName=b"DEV.APP.SVRCONN", ConnectionName=addr(embedded.port).encode(), MaxMsgLength=LIMIT)
    qmgr = pymqi.QueueManager(None)
    qmgr.connect_with_options("QM1", cd=cd)
    try:
        queue = pymqi.Queue(qmgr, "Q3")
        for call in (lambda: queue.put(BIG), lambda: qmgr.put1("Q3", BIG), lambda: queue.get(LIMIT + 1)):
            with pytest.raises(pymqi.MQMIError) as exc:
                call()
            assert (exc.value.comp, exc.value.reason) == (CMQC.MQCC_FAILED, CMQC.MQRC_DATA_LENGTH_ERROR)
        queue.put(b"fine")
        assert queue.get() == b"fine"
        queue.close()
    finally:
        qmgr.disconnect()
