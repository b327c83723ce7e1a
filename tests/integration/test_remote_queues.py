"""A remote put through a real server and client over TCP on 127.0.0.1: the message waits
on its transmission queue behind an MQXQH, where a getter (next: a channel's agent) finds it."""

from __future__ import annotations

import ferrymq.client as fc
from ferrymq.api import EmbeddedQueueManager
from ferrymq.mq import constants as C
from ferrymq.wire.mqxqh import unpack_xmit


def test_remote_put_over_tcp_lands_on_the_transmission_queue(embedded: EmbeddedQueueManager) -> None:
    done = embedded.mqsc("DEFINE QLOCAL(QM2) USAGE(XMITQ)",
                         "DEFINE QREMOTE(ORDERS.REMOTE) RNAME(ORDERS) RQMNAME(QM2)",
                         "DEFINE QREMOTE(MY.REPLIES) RNAME(REPLIES) RQMNAME(QM1)")
    assert all(r.ok for r in done), [r.messages for r in done]
    with fc.connect("QM1", f"127.0.0.1({embedded.port})") as client:
        remote = client.open("ORDERS.REMOTE")  # falls back to output only (2045 for input)
        sent = remote.put(b"order 1", persistent=True, reply_to_q="MY.REPLIES")
        direct = client.open("INVOICES", object_q_mgr_name="QM2")
        direct.put(b"invoice 1")
        xq = client.open("QM2")
        first, second = xq.get(wait=2), xq.get(wait=2)
    assert first.format.strip() == "MQXMIT" and first.persistent and first.msg_id == sent.msg_id
    header, original, at = unpack_xmit(first.data)
    assert (header.remote_q_name, header.remote_q_mgr_name) == ("ORDERS", "QM2")
    assert (original.reply_to_q.strip(), original.reply_to_q_mgr.strip()) == ("REPLIES", "QM1")  # reply-to alias
    assert original.persistence == C.MQPER_PERSISTENT and first.data[at:] == b"order 1"
    header, _, at = unpack_xmit(second.data)
    assert (header.remote_q_name, header.remote_q_mgr_name, second.data[at:]) == ("INVOICES", "QM2", b"invoice 1")
