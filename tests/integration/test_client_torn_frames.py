"""A reply frame damaged between the queue manager and a client ends the conversation with
MQRC_CONNECTION_BROKEN (2009) and a protocol error's text, instead of leaving the caller
waiting while heartbeats keep the connection alive.

A frame whose length field grew on the way holds the client inside it: the frame's real
bytes end, the server goes idle and sends heartbeats, and those are read as the rest of the
frame. The client knows the server's heartbeat packet and that it is sent alone, after a
pause; one found where a frame's rest was due says the length was damaged. Each case puts
a real damaging forwarder (damaging_proxy.py) between a real server and a real client.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from damaging_proxy import DamagingProxy

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.server import QueueManagerServer

SIZE_BYTE = 6  # the GPacket header's size field is bytes 4..7: this one adds 4096 to a small frame
GROW = 0x10
DETECTED_WITHIN = 10.0  # seconds: the server's heartbeat interval is 1 s in these fixtures
TIMEOUT = 20.0  # the client's own reply timeout, which the old code waited out (or forever)


def _addr(proxy: DamagingProxy) -> str:
    return f"127.0.0.1({proxy.port})"


def _assert_torn(exc: BaseException, started: float) -> None:
    assert isinstance(exc, fc.ConnectionBroken), exc
    assert exc.reason == C.MQRC_CONNECTION_BROKEN
    assert "heartbeat arrived inside a frame" in str(exc), exc
    assert time.monotonic() - started < DETECTED_WITHIN


@pytest.mark.parametrize("frame_type", [codec.T_OPEN_REPLY, codec.T_PUT_REPLY, codec.T_GET_REPLY])
def test_sync_client_ends_a_conversation_whose_reply_length_was_damaged(embedded: EmbeddedQueueManager,
                                                                        frame_type: int) -> None:
    assert embedded.server is not None
    proxy = DamagingProxy(embedded.server.port, frame_type, SIZE_BYTE, GROW)
    try:
        qm = fc.connect("QM1", _addr(proxy), heartbeat=1.0, timeout=TIMEOUT)
        started = time.monotonic()
        with pytest.raises(fc.MQError) as info:
            q = qm.open("Q1")
            started = time.monotonic()
            q.put(b"one")
            started = time.monotonic()
            q.get(wait=0)
        assert proxy.damaged.is_set()
        _assert_torn(info.value, started)
    finally:
        proxy.close()
    with fc.connect("QM1", f"127.0.0.1({embedded.server.port})") as other:  # the server serves on
        assert other.open("Q1").depth() in (0, 1)


def test_sync_get_waiting_forever_ends_when_its_reply_is_torn(embedded: EmbeddedQueueManager) -> None:
    """MQWI_UNLIMITED has no reply timeout: the old client waited for ever."""
    assert embedded.server is not None
    proxy = DamagingProxy(embedded.server.port, codec.T_GET_REPLY, SIZE_BYTE, GROW)
    outcome: list[BaseException] = []
    started = time.monotonic()

    def getter() -> None:
        qm = fc.connect("QM1", _addr(proxy), heartbeat=1.0, timeout=TIMEOUT)
        try:
            qm.open("Q2").get(wait=None)
        except fc.MQError as exc:
            outcome.append(exc)

    t = threading.Thread(target=getter, daemon=True)
    t.start()
    try:
        time.sleep(0.5)
        with fc.connect("QM1", f"127.0.0.1({embedded.server.port})") as producer:
            producer.open("Q2").put(b"for the waiting get", persistent=True)
        started = time.monotonic()
        t.join(DETECTED_WITHIN)
        assert not t.is_alive(), "the get is still waiting on a torn reply"
    finally:
        proxy.close()
    _assert_torn(outcome[0], started)


@pytest.mark.parametrize("frame_type", [codec.T_PUT_REPLY, codec.T_GET_REPLY])
async def test_async_client_ends_a_conversation_whose_reply_length_was_damaged(server: QueueManagerServer,
                                                                               frame_type: int) -> None:
    proxy = DamagingProxy(server.port, frame_type, SIZE_BYTE, GROW)
    try:
        qm = await fc.connect_async("QM1", _addr(proxy), heartbeat=1.0)
        q = await qm.open("Q1")
        started = time.monotonic()
        with pytest.raises(fc.MQError) as info:
            await asyncio.wait_for(q.put(b"one"), DETECTED_WITHIN)
            started = time.monotonic()
            await asyncio.wait_for(q.get(wait=0), DETECTED_WITHIN)
        assert proxy.damaged.is_set()
        _assert_torn(info.value, started)
    finally:
        proxy.close()
