"""Columnar puts over TCP (PUT_COLUMNS): each message keeps its data, identifiers, order
and MQSTAT outcome, under syncpoint as outside, exactly as the same puts one by one."""

from __future__ import annotations

import struct

import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.server import QueueManagerServer
from ferrymq.wire.mqmd import MQMD


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


def columns(payloads: list[bytes]) -> tuple[bytes, bytes]:
    offsets = [0]
    for p in payloads:
        offsets.append(offsets[-1] + len(p))
    return struct.pack(f">{len(offsets)}I", *offsets), b"".join(payloads)


def test_columns_deliver_every_message_in_order_with_its_identifiers(embedded: EmbeddedQueueManager) -> None:
    bodies = [b"%05d" % i * (i % 7) for i in range(500)]  # empty ones too
    ids = b"".join((i + 1).to_bytes(24, "big") if i % 3 else bytes(24) for i in range(500))  # zeros: a new one
    correls = b"".join(bytes([i % 250 + 1]) * 24 for i in range(500))
    md = MQMD(priority=3, persistence=C.MQPER_NOT_PERSISTENT, reply_to_q="R", format=C.MQFMT_STRING)
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("Q1", async_put=True)
        offsets, data = columns(bodies)
        assert q.put_columns(offsets, data, md=md, msg_ids=ids, correl_ids=correls) == 500
        assert qm.stat().successes == 500
        r = qm.open("Q1", read_ahead=100)
        got = [r.get(wait=5) for _ in bodies]
    assert [m.data for m in got] == bodies
    assert [m.correl_id for m in got] == [correls[i * 24 : i * 24 + 24] for i in range(500)]
    kept = [m.msg_id for i, m in enumerate(got) if i % 3]
    assert kept == [(i + 1).to_bytes(24, "big") for i in range(500) if i % 3]
    made = [m.msg_id for i, m in enumerate(got) if not i % 3]
    assert len(set(made)) == len(made) and bytes(24) not in made
    assert {(m.md.priority, m.md.reply_to_q.rstrip(), m.md.format.rstrip()) for m in got} == {(3, "R", "MQSTR")}


def test_columns_under_syncpoint_appear_on_commit_and_vanish_on_backout(embedded: EmbeddedQueueManager) -> None:
    offsets, data = columns([b"a", b"b", b"c"])
    with fc.connect("QM1", addr(embedded.port)) as qm, fc.connect("QM1", addr(embedded.port)) as other:
        q = qm.open("Q2", async_put=True)
        q.put_columns(offsets, data, syncpoint=True)
        assert qm.stat().successes == 3
        assert other.open("Q2").depth() == 3  # uncommitted puts count in the depth, as in MQ
        with pytest.raises(fc.NoMessageAvailable):
            other.open("Q2").get(wait=0)
        qm.backout()
        assert other.open("Q2").depth() == 0
        q.put_columns(offsets, data, syncpoint=True)
        qm.commit()
        assert [other.open("Q2").get(wait=1).data for _ in range(3)] == [b"a", b"b", b"c"]


def test_a_full_queue_and_an_over_maxmsgl_message_fail_with_ibms_reasons(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(SMALL) MAXDEPTH(3) MAXMSGL(4)")
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("SMALL", async_put=True)
        offsets, data = columns([b"ab", b"toolong", b"cd", b"ef", b"gh"])
        q.put_columns(offsets, data, syncpoint=True)
        st = qm.stat()
        assert (st.successes, st.failures) == (3, 2)
        assert isinstance(st.first_error, fc.MQError) and st.first_error.reason == C.MQRC_MSG_TOO_BIG_FOR_Q
        qm.backout()
        q.put_columns(*columns([b"1", b"2", b"3", b"4"]), syncpoint=True)
        st = qm.stat()
        assert (st.successes, st.failures) == (3, 1) and st.first_error is not None
        assert st.first_error.reason == C.MQRC_Q_FULL
        qm.backout()  # the refused batch leaves nothing behind
        assert qm.open("SMALL").depth() == 0


def test_put_inhibited_fails_every_message(embedded: EmbeddedQueueManager) -> None:
    embedded.mqsc("DEFINE QLOCAL(SHUT) PUT(DISABLED)")
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("SHUT", async_put=True)
        q.put_columns(*columns([b"a", b"b"]))
        st = qm.stat()
        assert (st.successes, st.failures) == (0, 2) and st.first_error is not None
        assert st.first_error.reason == C.MQRC_PUT_INHIBITED


def test_bad_columns_are_refused_before_anything_is_sent(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port), max_msg_length=1024) as qm:
        q = qm.open("Q1", async_put=True)
        offsets, data = columns([b"a", b"b"])
        with pytest.raises(ValueError, match="msg_ids"):
            q.put_columns(offsets, data, msg_ids=bytes(24))
        with pytest.raises(ValueError, match="offsets"):
            q.put_columns(struct.pack(">3I", 0, 2, 1), data)
        with pytest.raises(fc.MQError) as err:
            q.put_columns(*columns([b"x" * 1025]))
        assert err.value.reason == C.MQRC_DATA_LENGTH_ERROR
        with pytest.raises(ValueError, match="at most"):
            q.put_columns(*columns([b"x" * 1000] * (qm.column_limit() // 1000 + 1)))
        assert qm.stat().successes == 0
        assert qm.open("Q1").depth() == 0


async def test_the_async_client_puts_columns_too(server: QueueManagerServer) -> None:
    bodies = [b"a", b"", b"ccc"]
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q = await qm.open("Q3")
        offsets, data = columns(bodies)
        assert await q.put_columns(offsets, data, correl_ids=b"c" * 72, syncpoint=True) == 3
        assert (await qm.stat()).successes == 3
        await qm.commit()
        got = [await q.get(wait=1) for _ in bodies]
        assert [m.data for m in got] == bodies and {m.correl_id for m in got} == {b"c" * 24}
        assert qm.column_limit() > 0
