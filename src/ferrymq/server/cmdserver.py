"""The command server: serves PCF requests put to SYSTEM.ADMIN.COMMAND.QUEUE.

It is an engine connection of the queue manager itself (DISPLAY CONN shows it, as IBM's
shows amqpcsea) holding an unlimited get-wait on the command queue; each request is
executed by ferrymq.engine.commands and answered on its ReplyToQ with MsgType
MQMT_REPLY, Format MQADMIN, the request's Encoding, Persistence and Priority, and the
CorrelId PCF prescribes (the request's MsgId, or its CorrelId with MQRO_PASS_CORREL_ID).
Replies are put only once the command's own changes are durable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ferrymq.engine.api import Delivery, GetOptions, GetResult, ObjectDescriptor, PutOptions
from ferrymq.engine.commands.pcfmap import answer
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.cmdserver")

COMMAND_QUEUE = "SYSTEM.ADMIN.COMMAND.QUEUE"
Outbox = list[tuple[MQMD, str, str, bytes]]


class CommandServer:
    """Call ``pump()`` once started; route every Delivery through ``deliver()`` first."""

    def __init__(self, qmgr: QueueManager, send_when_durable: Callable[[int, Callable[[], None]], None]) -> None:
        self.qm = qmgr
        self.send_when_durable = send_when_durable
        self.hconn = qmgr.connect(appl_name="ferrymq command server", user="ferrymq", appl_type=C.MQAT_QMGR)
        opened = qmgr.open(self.hconn, ObjectDescriptor(object_name=COMMAND_QUEUE), C.MQOO_INPUT_SHARED)
        self.hobj = opened.hobj
        self.waiter_id = 0
        self.served = 0

    def pump(self) -> None:
        """Serve every request on the queue now, then wait for the next."""
        limit = int(self.qm.qmgr_attr("MAXMSGL"))
        while self.hconn in self.qm.connections:
            gmo = GetOptions(C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG, C.MQWI_UNLIMITED)
            try:
                got = self.qm.get(self.hconn, self.hobj, MQMD(), gmo, limit)
            except MQError as exc:
                log.warning("event=command_get_failed reason=%d detail=%s", exc.reason, exc.detail)
                return
            if not isinstance(got, GetResult):
                self.waiter_id = got.waiter_id
                return
            self.serve(got)

    def deliver(self, d: Delivery) -> bool:
        """True when this delivery was the command server's (it is then served)."""
        if not self.waiter_id or d.waiter_id != self.waiter_id:
            return False
        self.waiter_id = 0
        if d.result is not None:
            self.serve(d.result)
        self.pump()
        return True

    def stop(self) -> None:
        """End the command server's connection (its wait ends unanswered)."""
        self.waiter_id = 0
        if self.hconn in self.qm.connections:
            self.qm.disconnect(self.hconn)

    def serve(self, got: GetResult) -> None:
        md = got.md
        self.served += 1
        if not md.reply_to_q.strip():
            log.warning("event=command_without_reply_to msg_id=%s", md.msg_id.hex())
        if md.format.strip() != C.MQFMT_ADMIN.strip():
            hdr = P.CFH(F.MQCFT_RESPONSE, F.MQCMD_NONE, 1, F.MQCFC_LAST, C.MQCC_FAILED, F.MQRCCF_MD_FORMAT_ERROR)
            replies = [P.PCFMessage(hdr).pack(md.encoding)]
        else:
            replies = answer(self.qm, got.data[: got.data_length], md.encoding)
        if not md.reply_to_q.strip():
            return
        correl = md.correl_id if md.report & C.MQRO_PASS_CORREL_ID else md.msg_id
        msg_id = md.msg_id if md.report & C.MQRO_PASS_MSG_ID else C.MQMI_NONE
        outbox: Outbox = []
        for data in replies:
            rmd = MQMD(msg_type=C.MQMT_REPLY, format=C.MQFMT_ADMIN, encoding=md.encoding, coded_char_set_id=1208,
                       correl_id=correl, msg_id=msg_id, persistence=md.persistence, priority=md.priority)
            outbox.append((rmd, md.reply_to_q.strip(), md.reply_to_q_mgr.strip(), data))
        self.send_when_durable(self.qm.take_sync_lsn(), lambda: self._send(outbox))

    def _send(self, outbox: Outbox) -> None:
        for rmd, queue, qmgr, data in outbox:
            try:
                self.qm.put1(self.hconn, ObjectDescriptor(object_name=queue, object_q_mgr_name=qmgr), rmd,
                             PutOptions(C.MQPMO_NO_SYNCPOINT), data)
            except MQError as exc:  # IBM would dead-letter it; the requester sees no reply
                log.warning("event=command_reply_failed queue=%s reason=%d detail=%s", queue, exc.reason, exc.detail)
                return
