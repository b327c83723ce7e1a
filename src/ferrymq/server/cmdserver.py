"""The command server: serves PCF requests put to SYSTEM.ADMIN.COMMAND.QUEUE.

It is an engine connection of the queue manager itself (DISPLAY CONN shows it, as IBM's
shows amqpcsea) holding an unlimited get-wait on the command queue; each request is
executed by ferrymq.engine.commands and answered on its ReplyToQ with MsgType
MQMT_REPLY, Format MQADMIN, the request's Encoding, Persistence and Priority, and the
CorrelId PCF prescribes (the request's MsgId, or its CorrelId with MQRO_PASS_CORREL_ID).
Replies are put only once the command's own changes are durable.

The command server never dies of a queue attribute or of a message (docs/admin.md,
"When the command server cannot serve"):

- GET(DISABLED) on the command queue, or a get refused for another reason, leaves it idle,
  not ended: the driver calls ``pump()`` again on every housekeeping tick while ``idle``,
  so it resumes by itself once gets are allowed again, after a restart too. Its handle
  stays open meanwhile, so the queue still cannot be deleted (MQRCCF_OBJECT_OPEN).
- A request it cannot serve gets a PCF error reply where it names a ReplyToQ. Replies
  are the queue manager's own messages, placed as reports are (no handle, so no MAXHANDS
  limit applies); one its ReplyToQ cannot take goes to the dead-letter queue behind an
  MQDLH whose Reason says why; a request whose serving failed unexpectedly (a defect) is answered
  with MQRCCF_COMMAND_FAILED and kept on the dead-letter queue (MQDLH Reason
  MQRC_UNEXPECTED_ERROR). Then it goes on with the next message. ``_contained`` is the
  one boundary where any exception stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ferrymq.engine.api import Delivery, GetOptions, GetResult, ObjectDescriptor
from ferrymq.engine.commands.pcfmap import answer
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.qmgr import QueueManager
from ferrymq.errors import MQError
from ferrymq.mq import cfc as F
from ferrymq.mq import constants as C
from ferrymq.wire import pcf as P
from ferrymq.wire.mqmd import MQMD

log = logging.getLogger("ferrymq.cmdserver")

COMMAND_QUEUE = "SYSTEM.ADMIN.COMMAND.QUEUE"
USER = "ferrymq"
Outbox = list[tuple[MQMD, str, str, bytes]]

# Properties mean nothing to a PCF command, and asking for none keeps the get from
# re-forming them (an MQRFH2 the command server would only refuse as the wrong format).
_GET = C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG | C.MQGMO_NO_PROPERTIES
# Gets refused for these reasons end the command server: the queue manager is ending.
_ENDING = (C.MQRC_Q_MGR_QUIESCING, C.MQRC_Q_MGR_STOPPING, C.MQRC_CONNECTION_BROKEN, C.MQRC_HCONN_ERROR)


class CommandServer:
    """Call ``pump()`` once started, and again whenever ``idle``; route every Delivery
    through ``deliver()`` first."""

    def __init__(self, qmgr: QueueManager, send_when_durable: Callable[[int, Callable[[], None]], None]) -> None:
        self.qm = qmgr
        self.send_when_durable = send_when_durable
        self.hconn = qmgr.connect(appl_name="ferrymq command server", user=USER, appl_type=C.MQAT_QMGR)
        self.hobj = 0
        self.waiter_id = 0
        self.served = 0
        self.ended = False
        self.busy = False
        self.why_idle = 0  # the reason last logged for being idle (each is logged once)

    @property
    def idle(self) -> bool:
        """Neither waiting on the queue nor serving, nor ended: ``pump()`` is due."""
        return not (self.waiter_id or self.busy or self.ended)

    def pump(self) -> None:
        """Serve every request on the queue now, then wait for the next; never raises."""
        if self.busy or self.ended or self.waiter_id:
            return
        self.busy = True
        got: list[GetResult | None] = []
        try:
            while not self.ended and self.hconn in self.qm.connections:
                got.clear()
                # A get that fails with no MQ reason leaves its message where it was: idle
                # (retried every tick) rather than spin on it, logged once.
                quiet = self.why_idle == C.MQRC_UNEXPECTED_ERROR
                if not self._contained("get", lambda: got.append(self._get()), quiet=quiet):
                    self.why_idle = C.MQRC_UNEXPECTED_ERROR
                    return
                request = got[0]
                if request is None:
                    return
                self.serve_one(request)
        finally:
            self.busy = False

    def serve_one(self, request: GetResult) -> None:
        """Serve one request; if that fails unexpectedly (a defect), answer it with
        MQRCCF_COMMAND_FAILED and keep it on the dead-letter queue for whoever investigates."""
        if self._contained("serve", lambda: self.serve(request)):
            return
        md = request.md
        command = _command_of(request.data, md.encoding)
        self._contained("report", lambda: self.reply(md, [error_reply(command, F.MQRCCF_COMMAND_FAILED,
                                                                      md.encoding)]))
        self._contained("report", lambda: self._to_dead_letter_queue(
            md, request.data[: request.data_length], C.MQRC_UNEXPECTED_ERROR, COMMAND_QUEUE))

    def _get(self) -> GetResult | None:
        """The next request; None when now waiting, idle (the reason logged) or ended."""
        try:
            if not self.hobj:
                od = ObjectDescriptor(object_name=COMMAND_QUEUE)
                self.hobj = self.qm.open(self.hconn, od, C.MQOO_INPUT_SHARED).hobj
            limit = int(self.qm.qmgr_attr("MAXMSGL"))
            got = self.qm.get(self.hconn, self.hobj, MQMD(), GetOptions(_GET, C.MQWI_UNLIMITED), limit)
        except MQError as exc:
            self._cannot_get(exc)
            return None
        if self.why_idle:
            log.warning("event=command_server_resumed idle_reason=%d", self.why_idle)
            self.why_idle = 0
        if not isinstance(got, GetResult):
            self.waiter_id = got.waiter_id
            return None
        return got

    def _cannot_get(self, exc: MQError) -> None:
        if exc.reason in _ENDING:
            log.info("event=command_server_ended reason=%d", exc.reason)
            self.ended = True
            return
        if exc.reason in (C.MQRC_HOBJ_ERROR, C.MQRC_Q_DELETED, C.MQRC_UNKNOWN_OBJECT_NAME):
            self.hobj = 0  # opened again on the next pump
        if exc.reason != self.why_idle:
            # Idle, not ended: every tick tries again (docs/admin.md), so it resumes by itself.
            log.warning("event=command_server_idle reason=%d detail=%s; retried every tick", exc.reason, exc.detail)
            self.why_idle = exc.reason

    def deliver(self, d: Delivery) -> bool:
        """True when this delivery was the command server's (it is then served)."""
        if not self.waiter_id or d.waiter_id != self.waiter_id:
            return False
        self.waiter_id = 0
        if d.result is not None:
            self.serve_one(d.result)
        self.pump()  # after an error (GET(DISABLED) meanwhile) the get tells why
        return True

    def stop(self) -> None:
        """End the command server's connection (its wait ends unanswered)."""
        self.waiter_id = 0
        self.ended = True
        if self.hconn in self.qm.connections:
            self.qm.disconnect(self.hconn)

    def serve(self, got: GetResult) -> None:
        md = got.md
        self.served += 1
        if not md.reply_to_q.strip():
            log.warning("event=command_without_reply_to msg_id=%s", md.msg_id.hex())
        if md.format.strip() != C.MQFMT_ADMIN.strip():
            replies = [error_reply(F.MQCMD_NONE, F.MQRCCF_MD_FORMAT_ERROR, md.encoding)]
        else:
            replies = answer(self.qm, got.data[: got.data_length], md.encoding, md.user_identifier.strip())
            pings = self.qm.state.channel_control.take_deferred()
            if pings:  # PING CHANNEL: answered when the ping ends, by the channel initiator
                for ping in pings:
                    ping.answer = self._ping_answer(md)
                return
        self.reply(md, replies)

    def _ping_answer(self, md: MQMD) -> Callable[[int, str], None]:
        def answer_ping(reason: int, detail: str) -> None:
            hdr = P.CFH(F.MQCFT_RESPONSE, F.MQCMD_PING_CHANNEL, 1, F.MQCFC_LAST,
                        C.MQCC_FAILED if reason else C.MQCC_OK, reason)
            self._contained("reply", lambda: self.reply(md, [P.PCFMessage(hdr).pack(md.encoding)]))
        return answer_ping

    def reply(self, md: MQMD, replies: list[bytes]) -> None:
        """Put ``replies`` to the request's ReplyToQ once what it changed is durable."""
        if not md.reply_to_q.strip():
            return
        correl = md.correl_id if md.report & C.MQRO_PASS_CORREL_ID else md.msg_id
        msg_id = md.msg_id if md.report & C.MQRO_PASS_MSG_ID else C.MQMI_NONE
        outbox: Outbox = []
        for data in replies:
            rmd = MQMD(msg_type=C.MQMT_REPLY, format=C.MQFMT_ADMIN, encoding=md.encoding, coded_char_set_id=1208,
                       correl_id=correl, msg_id=msg_id, persistence=md.persistence, priority=md.priority)
            outbox.append((rmd, md.reply_to_q.strip(), md.reply_to_q_mgr.strip(), data))

        def send() -> None:
            self._contained("reply", lambda: self._send(outbox))

        self.send_when_durable(self.qm.take_sync_lsn(), send)

    def _send(self, outbox: Outbox) -> None:
        """Replies are the queue manager's own messages (as reports are): placed without a
        handle, so no connection limit (MAXHANDS) can silence the command server, and one
        its ReplyToQ cannot take goes to the dead-letter queue behind an MQDLH with the
        reason (engine.reports.deliver_generated)."""
        for rmd, queue, qmgr, data in outbox:
            self.qm.deliver_generated(self._stamped(rmd), data, queue, qmgr, None)

    def _stamped(self, md: MQMD) -> MQMD:
        date, tod = self.qm.stamp_put(self.qm.clock.now())
        return md.replace(msg_id=self.qm.new_id() if md.msg_id == C.MQMI_NONE else md.msg_id,
                          put_appl_type=C.MQAT_QMGR, put_appl_name=self.qm.name[:28], put_date=date, put_time=tod,
                          user_identifier=USER, reply_to_q_mgr=self.qm.name)

    def _to_dead_letter_queue(self, md: MQMD, data: bytes, reason: int, dest_q: str) -> None:
        """As IBM's queue manager does with a message it cannot deliver: onto the DLQ behind
        an MQDLH naming ``reason`` and the queue it was meant for, its descriptor (context
        included) kept; logged and dropped when the DLQ cannot take it either."""
        dlq = self.qm.dead_letter_queue()
        if dlq is None:
            log.warning("event=command_dead_letter_failed reason=%d dest=%s why=no dead-letter queue", reason, dest_q)
            return
        date, tod = self.qm.stamp_put(self.qm.clock.now())
        dmd, body = dead_letter(self.qm.name, self.qm.qmgr_attr("CCSID"), md, data, reason, dest_q, date, tod)
        self.qm.deliver_generated(dmd, body, dlq.name, "", None)
        log.warning("event=message_dead_lettered source=command_server queue=%s dlq=%s reason=%d msg_id=%s length=%d",
                    dest_q, dlq.name, reason, md.msg_id.hex(), len(data))

    def _contained(self, what: str, work: Callable[[], object], *, quiet: bool = False) -> bool:
        """The containment boundary: one step of serving (a get, a request, a reply) that
        fails unexpectedly is logged and reported False, never raised: nothing may escape
        into the event loop or stop the pump. The broad except is deliberate, and the
        command server's only one."""
        try:
            work()
        except Exception:
            if not quiet:
                log.exception("event=command_%s_failed", what)
            return False
        return True


def error_reply(command: int, reason: int, encoding: int) -> bytes:
    """One final MQCFT_RESPONSE with MQCC_FAILED and ``reason``."""
    hdr = P.CFH(F.MQCFT_RESPONSE, command, 1, F.MQCFC_LAST, C.MQCC_FAILED, reason)
    return P.PCFMessage(hdr).pack(encoding)


def _command_of(data: bytes, encoding: int) -> int:
    """The Command field of a request's MQCFH, for its error reply (MQCMD_NONE when absent)."""
    if len(data) < 16:
        return F.MQCMD_NONE
    return int.from_bytes(data[12:16], "little" if P.order(encoding) == "<" else "big", signed=True)
