"""MQGMO_CONVERT through a real server on 127.0.0.1: pymqi programs and the Pythonic client,
sync and async (docs/conversion.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ferrymq.client as fc
import ferrymq.pymqi as pymqi
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.pymqi import CMQC
from ferrymq.server import QueueManagerServer
from ferrymq.wire.mqdlh import MQDLH
from ferrymq.wire.mqmd import MQMD

TEXT = "Grüße aus Zürich: [1] ^ ¬ ¢ é"
UTF8 = MQMD(format="MQSTR", coded_char_set_id=1208)


@pytest.fixture
def qmgr(embedded: EmbeddedQueueManager) -> Iterator[pymqi.QueueManager]:
    qm = pymqi.connect("QM1", "DEV.APP.SVRCONN", f"127.0.0.1({embedded.port})")
    yield qm
    qm.disconnect()


def put_utf8_little_endian(qmgr: pymqi.QueueManager, data: bytes, fmt: bytes = CMQC.MQFMT_STRING) -> None:
    q = pymqi.Queue(qmgr, "Q1")
    q.put(data, pymqi.MD(Format=fmt, CodedCharSetId=1208, Encoding=CMQC.MQENC_REVERSED))
    q.close()


def test_pymqi_put_utf8_little_endian_get_ebcdic_big_endian(qmgr: pymqi.QueueManager) -> None:
    put_utf8_little_endian(qmgr, TEXT.encode())
    q = pymqi.Queue(qmgr, "Q1")
    md = pymqi.MD(CodedCharSetId=37, Encoding=CMQC.MQENC_NORMAL)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_CONVERT | CMQC.MQGMO_NO_WAIT)
    assert q.get(None, md, gmo) == TEXT.encode("cp037")
    assert (md.CodedCharSetId, md.Encoding, md.Format) == (37, CMQC.MQENC_NORMAL, CMQC.MQFMT_STRING)
    # Without the option the message comes as it was put.
    put_utf8_little_endian(qmgr, TEXT.encode())
    md = pymqi.MD(CodedCharSetId=37, Encoding=CMQC.MQENC_NORMAL)
    assert q.get(None, md) == TEXT.encode() and md.CodedCharSetId == 1208
    q.close()


def test_pymqi_dead_letter_chain_converted(qmgr: pymqi.QueueManager) -> None:
    dlh = MQDLH(reason=C.MQRC_Q_FULL, dest_q_name="DEST", encoding=C.MQENC_REVERSED, coded_char_set_id=1208,
                format="MQSTR").pack()
    put_utf8_little_endian(qmgr, dlh + TEXT.encode(), CMQC.MQFMT_DEAD_LETTER_HEADER)
    q = pymqi.Queue(qmgr, "Q1")
    md = pymqi.MD(CodedCharSetId=500, Encoding=CMQC.MQENC_NORMAL)
    data = q.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_CONVERT))
    assert data[:4] == "DLH ".encode("cp500") and data[8:12] == C.MQRC_Q_FULL.to_bytes(4, "big")
    assert data[112:116] == (500).to_bytes(4, "big") and data[172:] == TEXT.encode("cp500")
    q.close()


@pytest.mark.parametrize(("fmt", "ccsid", "reason"), [
    (CMQC.MQFMT_NONE, 37, C.MQRC_FORMAT_ERROR),
    (CMQC.MQFMT_STRING, 4321, C.MQRC_TARGET_CCSID_ERROR),
    (CMQC.MQFMT_STRING, 819, C.MQRC_NOT_CONVERTED),
])
def test_pymqi_warning_raises_with_the_unconverted_message(qmgr: pymqi.QueueManager, fmt: bytes, ccsid: int,
                                                            reason: int) -> None:
    data = "5 €".encode()
    put_utf8_little_endian(qmgr, data, fmt)
    q = pymqi.Queue(qmgr, "Q1")
    md = pymqi.MD(CodedCharSetId=ccsid)
    with pytest.raises(pymqi.MQMIError) as err:
        q.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_CONVERT))
    assert (err.value.comp, err.value.reason) == (CMQC.MQCC_WARNING, reason)
    assert err.value.message == data and md.CodedCharSetId == 1208
    q.close()


def test_pymqi_converted_message_too_big(qmgr: pymqi.QueueManager) -> None:
    put_utf8_little_endian(qmgr, b"abcd")
    q = pymqi.Queue(qmgr, "Q1")
    md = pymqi.MD(CodedCharSetId=1200, Encoding=CMQC.MQENC_NORMAL)
    with pytest.raises(pymqi.MQMIError) as err:
        q.get(6, md, pymqi.GMO(Options=CMQC.MQGMO_CONVERT))
    assert (err.value.comp, err.value.reason) == (CMQC.MQCC_WARNING, C.MQRC_CONVERTED_MSG_TOO_BIG)
    assert err.value.message == b"abcd" and md.CodedCharSetId == 1208
    md = pymqi.MD(CodedCharSetId=1200, Encoding=CMQC.MQENC_NORMAL)
    with pytest.raises(pymqi.MQMIError):
        q.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_NO_WAIT))  # taken: the queue is empty
    q.close()


def test_client_get_converts(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", f"127.0.0.1({embedded.port})") as c:
        q = c.open("Q1")
        q.put(TEXT.encode(), md=UTF8)
        got = q.get(ccsid=1047, encoding=C.MQENC_NORMAL)
        assert got.data.endswith(bytes.fromhex("adf1bd405f40b0404a4051"))  # "[1] ^ ¬ ¢ é" in 1047
        assert (got.md.coded_char_set_id, got.md.encoding, got.text) == (1047, C.MQENC_NORMAL, TEXT)
        q.put("x€".encode(), md=UTF8)
        warned = q.get(ccsid=37)
        assert (warned.reason, warned.data, warned.md.coded_char_set_id) == (C.MQRC_NOT_CONVERTED, "x€".encode(), 1208)


async def test_async_client_get_converts(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", f"127.0.0.1({server.port})") as c:
        q = await c.open("Q1")
        await q.put(TEXT.encode(), md=UTF8)
        got = await q.get(ccsid=1200, encoding=C.MQENC_REVERSED)
        assert got.data == TEXT.encode("utf-16-le") and got.text == TEXT
