"""Hand-made malformed frames: each ends its connection with an ENDING naming the rule.

The fuzzer (test_protocol_fuzz.py) finds such frames at random; these are the cases worth
naming, each checked at a real server on 127.0.0.1: the server answers ENDING with
MQRC_CONNECTION_BROKEN (2009) and a detail that names what was wrong, then closes, and a
client connected meanwhile goes on.
"""

from __future__ import annotations

import gc
import logging
import struct
import time
from collections.abc import Iterator

import pytest
from test_protocol_fuzz import ErrorLog, exchange, problems

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import codec
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection
from ferrymq.server.handler import ClientHandler
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire import gpacket
from ferrymq.wire.mqmd import MQMD

MAGIC = gpacket.MAGIC


def head(ptype: int, body_len: int, corr: int = 2, *, size: int | None = None, magic: int = MAGIC,
         version: int = 350, props: int = 0, flags: int = 1) -> bytes:
    return struct.pack(">hhiiiqqI", version, ptype, 36 + body_len if size is None else size, magic, props, 0, corr,
                       flags)


def connected_client() -> ClientConnection:
    c = ClientConnection()
    c.send(E.Connect(1, "QM1"))
    c._negotiated(1 << 20, E.PROTOCOL_VERSION)
    c.state = c.state.CONNECTED
    return c


CONNECT = ClientConnection().send(E.Connect(1, "QM1", max_msg_length=1000))
_c = connected_client()
OPEN = _c.send(E.Open(2, "Q1", C.MQOO_OUTPUT))
PUT = _c.send(E.Put(3, 1, MQMD(), b"x" * 2000))  # over the 1000 bytes this connection agreed
PROPS = gpacket.encode_properties({"k": 1})
SUB = _c.send(E.Sub(4, C.MQSO_CREATE | C.MQSO_MANAGED, object_string="a/b", sub_name="S"))
_LONG = b"t" * (C.MQ_TOPIC_STR_LENGTH + 1)
LONG_TOPIC = (struct.pack(">ii", C.MQOO_OUTPUT, C.MQOT_TOPIC) + b"\0\0" * 5 + struct.pack(">H", len(_LONG)) + _LONG)

CASES = {
    "not a GPacket": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(40),
    "size beyond the handshake limit": head(codec.T_CONNECT, 0, 1, size=1 << 30),
    "negative size": CONNECT + head(codec.T_COMMIT, 0, size=-1),
    "size below the header": CONNECT + head(codec.T_COMMIT, 0, size=20),
    "bad magic": CONNECT + head(codec.T_COMMIT, 0, magic=0),
    "bad version": CONNECT + head(codec.T_COMMIT, 0, version=349),
    "properties size beyond the frame": CONNECT + head(codec.T_COMMIT, 0, props=100),
    "a GPacket properties section": CONNECT + head(codec.T_COMMIT, len(PROPS), props=len(PROPS)) + PROPS,
    "a request before Connect": head(codec.T_COMMIT, 0),
    "a second Connect": CONNECT + CONNECT[:24] + struct.pack(">q", 2) + CONNECT[32:],
    "a server frame from the client": CONNECT + head(codec.T_REPLY, 10) + bytes(10),
    "an unknown frame type": CONNECT + head(1177, 0),
    "a body longer than its frame says": CONNECT + OPEN[:4] + struct.pack(">i", len(OPEN) - 5) + OPEN[8:],
    "bytes after the body": CONNECT + OPEN[:4] + struct.pack(">i", len(OPEN) + 3) + OPEN[8:] + b"\0\0\0",
    "a string length past the end": CONNECT + OPEN[:44] + b"\xff\xff" + OPEN[46:],
    "a string that is not UTF-8": CONNECT + OPEN[:46] + b"\xff\xfe" + OPEN[48:],
    "a Put over the negotiated maximum": CONNECT + PUT,
    "a correlation id of 0": CONNECT + OPEN[:24] + struct.pack(">q", 0) + OPEN[32:],
    "a batch of no items": CONNECT + head(codec.T_PUT_BATCH, 12 + 4 + 364, flags=0)
    + struct.pack(">IiII", 1, 0, 0, 0) + bytes(364),
    "too many inquire selectors": CONNECT + head(codec.T_INQUIRE, 6) + struct.pack(">IH", 1, 0xFFFF),
    "a topic string over 10240 characters": CONNECT + head(codec.T_OPEN, len(LONG_TOPIC)) + LONG_TOPIC,
    "a SUB cut short": CONNECT + SUB[:4] + struct.pack(">i", len(SUB) - 4) + SUB[8:-4],
    "a SUB with bytes after its body": CONNECT + SUB[:4] + struct.pack(">i", len(SUB) + 1) + SUB[8:] + b"\0",
    "the stream ends inside a header": CONNECT + OPEN[:20],
    "the stream ends inside a body": CONNECT + OPEN[:-3],
}


@pytest.fixture(scope="module")
def qm() -> Iterator[EmbeddedQueueManager]:
    emb = EmbeddedQueueManager("QM1", MemoryJournal(), listen=True, port=0, max_msg_length=1 << 20)
    emb.start()
    emb.run(lambda: emb.qmgr.objects.define("QLOCAL", "Q1"))
    yield emb
    emb.stop()


@pytest.mark.parametrize("stream", CASES.values(), ids=CASES.keys())
def test_a_malformed_frame_ends_its_connection_with_an_ending(qm: EmbeddedQueueManager, stream: bytes) -> None:
    with fc.connect("QM1", f"127.0.0.1({qm.port})") as bystander:
        q = bystander.open("Q1")
        data, closed = exchange(qm.port, stream)
        assert closed and not problems(data)
        frames = []
        pos = 0
        while pos < len(data):
            size = struct.unpack_from(">i", data, pos + 4)[0]
            frames.append(codec.decode(codec.SERVER_FRAMES, struct.unpack_from(">h", data, pos + 2)[0], 0, 0,
                                       data[pos + 36 : pos + size], None))
            pos += size
        assert frames and isinstance(frames[-1], E.Ending), frames
        assert frames[-1].reason == C.MQRC_CONNECTION_BROKEN and frames[-1].detail.startswith("protocol error: ")
        q.put(b"still serving")
        assert q.get().data == b"still serving"


def handlers_alive() -> int:
    gc.collect()
    return sum(isinstance(o, ClientHandler) for o in gc.get_objects())


def test_a_kept_protocol_error_record_does_not_keep_its_connection(qm: EmbeddedQueueManager) -> None:
    """A protocol error's log record holds text, not the exception: an exception's traceback
    holds the ended connection's frames, and with them its handler, reader and buffers. A
    long fuzz campaign under a log capture grew by 75 KiB per malformed conversation."""
    keeper = ErrorLog(logging.DEBUG)  # keeps every record, as a buffer or a log capture does
    logging.getLogger().addHandler(keeper)
    try:
        before = handlers_alive()
        for stream in CASES.values():
            exchange(qm.port, stream)
        deadline = time.monotonic() + 10
        while handlers_alive() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("event=protocol_error" in r.getMessage() for r in keeper.records)
        assert handlers_alive() <= before
    finally:
        logging.getLogger().removeHandler(keeper)
