"""Reports and request/reply through a real server with both client APIs."""

from __future__ import annotations

import threading

import pytest

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.server import QueueManagerServer


def addr(port: int) -> str:
    return f"127.0.0.1({port})"


@pytest.mark.parametrize(("options", "msg_id_is_request", "correl_is"), [
    (C.MQRO_NONE, False, "msg_id"),
    (C.MQRO_PASS_MSG_ID, True, "msg_id"),
    (C.MQRO_PASS_CORREL_ID, False, "correl_id"),
    (C.MQRO_PASS_MSG_ID | C.MQRO_PASS_CORREL_ID, True, "correl_id"),
])
def test_reply_honours_the_request_options(embedded: EmbeddedQueueManager, options: int, msg_id_is_request: bool,
                                           correl_is: str) -> None:
    with fc.connect("QM1", addr(embedded.port)) as server_side, fc.connect("QM1", addr(embedded.port)) as client:
        requests, replies = client.open("Q1"), client.open("REPLY")
        sent = requests.put(b"2+2?", reply_to_q="REPLY", report=options, correl_id=b"conversation-7",
                            priority=6, persistent=True)
        req = server_side.open("Q1").get(wait=2)
        server_side.reply(req, "4")
        rep = replies.get(wait=2)
        assert rep.md.msg_type == C.MQMT_REPLY and rep.text == "4" and rep.format.strip() == "MQSTR"
        assert (rep.msg_id == sent.msg_id) is msg_id_is_request
        assert rep.correl_id == (sent.msg_id if correl_is == "msg_id" else sent.correl_id)
        assert rep.priority == 6 and rep.persistent


def test_pan_nan_and_exception_reports_only_when_asked(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q, reply = qm.open("Q1"), qm.open("REPLY")
        q.put(b"order-1" + b"x" * 200, reply_to_q="REPLY", report=C.MQRO_PAN | C.MQRO_EXCEPTION_WITH_DATA)
        m = q.get()
        assert qm.send_report(m, C.MQFB_NAN) is None  # not asked for
        qm.send_report(m, C.MQFB_PAN)
        qm.send_report(m, C.MQFB_APPL_FIRST + 5)  # an application-defined exception
        pan, exc = reply.get(), reply.get()
        assert pan.md.msg_type == C.MQMT_REPORT and pan.md.feedback == C.MQFB_PAN and pan.data == b""
        assert pan.correl_id == m.msg_id
        assert exc.md.feedback == C.MQFB_APPL_FIRST + 5 and exc.data == m.data[:100]
        q.put(b"no reply queue")
        with pytest.raises(fc.MQError) as ei:
            qm.reply(q.get(), b"?")
        assert ei.value.reason == C.MQRC_MISSING_REPLY_TO_Q


def test_missing_reply_to_q_on_put(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q = qm.open("Q1")
        for kw in ({"msg_type": C.MQMT_REQUEST}, {"report": C.MQRO_COA}):
            with pytest.raises(fc.MQError) as ei:
                q.put(b"x", **kw)  # type: ignore[arg-type]
            assert ei.value.reason == C.MQRC_MISSING_REPLY_TO_Q
        with pytest.raises(fc.MQError) as ei:
            qm.put1("Q1", b"x", report=C.MQRO_COD)
        assert ei.value.reason == C.MQRC_MISSING_REPLY_TO_Q
        assert q.depth() == 0


def test_coa_and_cod_end_to_end(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as qm:
        q, reply = qm.open("Q2"), qm.open("REPLY")
        sent = q.put(b"track me", reply_to_q="REPLY", report=C.MQRO_COA | C.MQRO_COD_WITH_DATA)
        coa = reply.get(wait=2)
        assert coa.md.feedback == C.MQFB_COA and coa.correl_id == sent.msg_id and coa.data == b""
        with qm.transaction():
            q.get()
            with pytest.raises(fc.NoMessageAvailable):
                reply.get(syncpoint=False)  # the COD waits for the getter's commit
        cod = reply.get(wait=2)
        assert cod.md.feedback == C.MQFB_COD and cod.data == b"track me"
        assert cod.md.put_appl_type == C.MQAT_QMGR


def test_quit_feedback_stops_the_servers(embedded: EmbeddedQueueManager) -> None:
    """The seed's monitoring example: MQINQ OPEN_INPUT_COUNT says how many programs serve a
    queue; one message with Feedback MQFB_QUIT per server tells each to end."""
    served: list[bytes] = []

    def serve() -> None:
        with fc.connect("QM1", addr(embedded.port)) as qm:
            q = qm.open("Q3")
            while True:
                m = q.get(wait=10)
                if m.md.feedback == C.MQFB_QUIT:
                    return
                served.append(m.data)

    servers = [threading.Thread(target=serve) for _ in range(2)]
    for t in servers:
        t.start()
    with fc.connect("QM1", addr(embedded.port)) as monitor:
        q = monitor.open("Q3", options=C.MQOO_INQUIRE | C.MQOO_OUTPUT)  # not an input opener itself
        for _ in range(100):
            if q.inquire(C.MQIA_OPEN_INPUT_COUNT)[C.MQIA_OPEN_INPUT_COUNT] == 2:
                break
            threading.Event().wait(0.05)
        count = int(q.inquire(C.MQIA_OPEN_INPUT_COUNT)[C.MQIA_OPEN_INPUT_COUNT])
        assert count == 2
        q.put(b"work")
        for _ in range(count):
            q.put(b"", feedback=C.MQFB_QUIT)
        for t in servers:
            t.join(10)
            assert not t.is_alive()
        assert served == [b"work"]
        assert q.inquire(C.MQIA_OPEN_INPUT_COUNT)[C.MQIA_OPEN_INPUT_COUNT] == 0


async def test_async_client_reply_and_report(server: QueueManagerServer) -> None:
    async with await fc.connect_async("QM1", addr(server.port)) as qm:
        q, reply = await qm.open("Q1"), await qm.open("REPLY")
        sent = await q.put(b"ping", reply_to_q="REPLY", report=C.MQRO_NAN | C.MQRO_PASS_CORREL_ID, correl_id=b"c1")
        m = await q.get()
        await qm.reply(m, b"pong")
        await qm.send_report(m, C.MQFB_NAN)
        rep, nan = await reply.get(), await reply.get()
        assert rep.data == b"pong" and rep.correl_id == b"c1".ljust(24, b"\0")
        assert nan.md.feedback == C.MQFB_NAN and nan.correl_id == sent.correl_id


def test_an_intermediary_forwards_identifiers_and_report_options(embedded: EmbeddedQueueManager) -> None:
    with fc.connect("QM1", addr(embedded.port)) as qm:
        inbound, outbound, reply = qm.open("Q1"), qm.open("Q2"), qm.open("REPLY")
        sent = inbound.put(b"routed", reply_to_q="REPLY", report=C.MQRO_COD | C.MQRO_PASS_CORREL_ID,
                           correl_id=b"trace-42")
        m = inbound.get()
        outbound.put(m.data, md=m.md)  # forwarded unchanged: MsgId, CorrelId, Report, ReplyToQ
        final = outbound.get()
        assert (final.msg_id, final.correl_id, final.md.report) == (sent.msg_id, sent.correl_id, sent.md.report)
        cod = reply.get(wait=2)  # the COD answers the final delivery, correlated by the original CorrelId
        assert cod.md.feedback == C.MQFB_COD and cod.correl_id == sent.correl_id
