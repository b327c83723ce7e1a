"""Selection strings over TCP on 127.0.0.1: the Pythonic clients (get, browse, wait,
read-ahead, get_batch) and pymqi's OD SelectionString, with IBM's reasons for bad ones."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC
from ferrymq.server import QueueManagerServer


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def fill(q: fc.Queue, n: int = 10) -> None:
    """Messages m0..m{n-1} with n = i and colour red for multiples of 3."""
    for i in range(n):
        q.put(f"m{i}", properties={"n": i, "colour": "red" if i % 3 == 0 else "blue"}, persistent=False)


@pytest.fixture
def client(embedded: EmbeddedQueueManager) -> Iterator[fc.Client]:
    with fc.connect("QM1", addr(embedded.port)) as c:
        yield c


def test_get_and_browse_see_only_selected_messages(client: fc.Client) -> None:
    fill(client.open("Q1"))
    sel = client.open("Q1", selector="colour = 'red' AND n > 0")
    assert [m.text for m in sel.browse()] == ["m3", "m6", "m9"]
    assert sel.get().text == "m3"
    assert [m.properties["n"] for m in sel.messages()] == [6, 9]
    with pytest.raises(fc.NoMessageAvailable):
        sel.get()
    assert [m.text for m in client.open("Q1").browse()] == [f"m{i}" for i in (0, 1, 2, 4, 5, 7, 8)]


@pytest.mark.parametrize(("selector", "options", "reason"), [
    ("colour = ", None, C.MQRC_SELECTOR_SYNTAX_ERROR),
    ("colour LIKE 'a' ESCAPE 'bc'", None, C.MQRC_SELECTOR_SYNTAX_ERROR),
    ("1 > 2", None, C.MQRC_SELECTOR_ALWAYS_FALSE),
    ("n = 1", C.MQOO_OUTPUT, C.MQRC_SELECTOR_INVALID_FOR_TYPE),
    ("n = " + "1" * C.MQ_SELECTOR_LENGTH, None, C.MQRC_SELECTION_STRING_ERROR),
    ("n = " + "1" * 70_000, None, C.MQRC_SELECTION_STRING_ERROR),  # more than a frame's string holds
])
def test_bad_selectors_are_refused_with_ibm_reasons(client: fc.Client, selector: str, options: int | None,
                                                    reason: int) -> None:
    with pytest.raises(fc.InvalidSelector) as e:
        client.open("Q1", selector=selector, options=options)
    assert (e.value.comp, e.value.reason) == (C.MQCC_FAILED, reason)
    client.open("Q1").put(b"still fine")  # the connection is unharmed


def test_read_ahead_pushes_only_selected_messages(embedded: EmbeddedQueueManager, client: fc.Client) -> None:
    fill(client.open("Q2"), 30)
    with fc.connect("QM1", addr(embedded.port)) as consumer:
        sel = consumer.open("Q2", selector="colour = 'red'", read_ahead=5)
        got = [sel.get(wait=2).properties["n"] for _ in range(10)]
        assert got == list(range(0, 30, 3))
        with pytest.raises(fc.NoMessageAvailable):
            sel.get(wait=0.2)
    assert client.open("Q2").depth() == 20


def test_get_batch_takes_only_selected_messages(client: fc.Client) -> None:
    fill(client.open("Q3"), 12)
    sel = client.open("Q3", selector="n BETWEEN 4 AND 7")
    assert [m.text for m in sel.get_batch(10)] == ["m4", "m5", "m6", "m7"]
    assert sel.get_batch(10) == []


async def test_waiting_get_is_answered_by_the_matching_put(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as consumer, \
            await fc.connect_async("QM1", addr(server.port)) as producer:
        sel = await consumer.open("Q1", selector="kind = 'wanted'")
        out = await producer.open("Q1")
        waiting = asyncio.ensure_future(sel.get(wait=10))
        await asyncio.sleep(0.1)
        await out.put(b"other", properties={"kind": "other"})
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await out.put(b"wanted", properties={"kind": "wanted"})
        assert (await asyncio.wait_for(waiting, 5)).data == b"wanted"
        assert [m.data async for m in out.browse()] == [b"other"]


# -- pymqi -----------------------------------------------------------------------------------

@pytest.fixture
def qmgr(embedded: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", addr(embedded.port))
    yield qm
    qm.disconnect()


def tail(data: bytes) -> bytes:
    """The application data after the MQRFH2 that carries the properties to a handle-less getter."""
    assert data.startswith(b"RFH ")
    return data[int.from_bytes(data[8:12], "little"):]


def selecting_od(name: bytes, selector: bytes) -> pymqi.OD:
    od = pymqi.OD(ObjectName=name, Version=CMQC.MQOD_VERSION_4)
    od.set_vs("SelectionString", selector)
    return od


def test_pymqi_selection_string(client: fc.Client, qmgr: pymqi.QueueManager) -> None:
    fill(client.open("Q1"))
    q = pymqi.Queue(qmgr, selecting_od(b"Q1", b"n >= 7 OR Root.MQMD.Priority > 100"), CMQC.MQOO_INPUT_SHARED)
    assert [tail(q.get()) for _ in range(3)] == [b"m7", b"m8", b"m9"]
    with pytest.raises(pymqi.MQMIError) as e:
        q.get()
    assert e.value.reason == CMQC.MQRC_NO_MSG_AVAILABLE
    q.close()
    assert client.open("Q1").depth() == 7


def test_pymqi_od_version_below_4_has_no_selection_string(client: fc.Client, qmgr: pymqi.QueueManager) -> None:
    fill(client.open("Q2"), 3)
    od = selecting_od(b"Q2", b"n = 2")
    od.Version = CMQC.MQOD_VERSION_3
    q = pymqi.Queue(qmgr, od, CMQC.MQOO_INPUT_SHARED)
    assert tail(q.get()) == b"m0"
    q.close()


def test_pymqi_selection_refusals(qmgr: pymqi.QueueManager) -> None:
    def reason_of(od: pymqi.OD, options: int = CMQC.MQOO_INPUT_SHARED) -> int:
        with pytest.raises(pymqi.MQMIError) as e:
            pymqi.Queue(qmgr, od, options)
        assert e.value.comp == CMQC.MQCC_FAILED
        return int(e.value.reason)

    assert reason_of(selecting_od(b"Q1", b"n = = 1")) == CMQC.MQRC_SELECTOR_SYNTAX_ERROR
    assert reason_of(selecting_od(b"Q1", b"n = 1"), CMQC.MQOO_OUTPUT) == CMQC.MQRC_SELECTOR_INVALID_FOR_TYPE
    too_long = selecting_od(b"Q1", b"n = " + b"1" * CMQC.MQ_SELECTOR_LENGTH)
    assert reason_of(too_long) == CMQC.MQRC_SELECTION_STRING_ERROR
    lying = selecting_od(b"Q1", b"n = 1")
    lying.SelectionStringVSLength = 50  # longer than the string it points at
    assert reason_of(lying) == CMQC.MQRC_SELECTION_STRING_ERROR
    negative = selecting_od(b"Q1", b"n = 1")
    negative.SelectionStringVSLength = -2
    assert reason_of(negative) == CMQC.MQRC_SELECTION_STRING_ERROR
    odd_ccsid = selecting_od(b"Q1", b"n = 1")
    odd_ccsid.SelectionStringVSCCSID = 37
    assert reason_of(odd_ccsid) == CMQC.MQRC_SOURCE_CCSID_ERROR
    with pytest.raises(pymqi.MQMIError) as e:
        qmgr.put1(selecting_od(b"Q1", b"n = 1"), b"x")
    assert e.value.reason == CMQC.MQRC_SELECTOR_INVALID_FOR_TYPE


def test_pymqi_null_terminated_selection_string(client: fc.Client, qmgr: pymqi.QueueManager) -> None:
    fill(client.open("Q3"), 3)
    od = selecting_od(b"Q3", b"n = 1\0trailing bytes")
    od.SelectionStringVSLength = CMQC.MQVS_NULL_TERMINATED
    assert od.get_vs("SelectionString") == b"n = 1"
    q = pymqi.Queue(qmgr, od, CMQC.MQOO_INPUT_SHARED)
    assert tail(q.get()) == b"m1"
    q.close()
