"""Report messages the queue manager generates: confirmation of arrival (COA), confirmation
of delivery (COD) and expiration; and where a report goes when it cannot be delivered.

The rules (ibmmq-reference §6, "MsgId/CorrelId of reports and replies", "Report data
amount", "COA vs COD", "Expiry"):

- COA when a message is placed on its queue (for a put in a unit of work: at commit);
  COD when it is destructively got (never on browse), inside the getter's unit of work if
  there is one, so it vanishes on backout; an expiration report when an expired message is
  discarded. No COA or COD for a message in MQDEAD or MQXMIT format.
- Each option comes in three strengths: no data, the leading MQ headers plus the first 100
  bytes of data (*_WITH_DATA), or all of it (*_WITH_FULL_DATA).
- MsgId: new unless MQRO_PASS_MSG_ID; CorrelId: the original's MsgId unless
  MQRO_PASS_CORREL_ID (then the original's CorrelId).
- MsgType REPORT; Feedback the MQFB_* value; Priority, Persistence, Format, Encoding and
  CCSID of the original; Report and Expiry: with MQRO_PASS_DISCARD_AND_EXPIRY the original's
  MQRO_DISCARD_MSG and remaining expiry, else MQRO_NONE and unlimited; the identity context
  of the original, PutApplType MQAT_QMGR with the queue manager's name.
- The report goes to the original's ReplyToQ at ReplyToQMgr. If it cannot be put there
  (no such queue, another queue manager with no route, full, put-inhibited, too big) it
  goes to the dead-letter queue behind an MQDLH giving the reason — unless the report
  carries MQRO_DISCARD_MSG. One that can go nowhere is logged, never dropped silently.
"""

from __future__ import annotations

import logging

from ferrymq.engine import attrs as A
from ferrymq.engine.arrival import Arrivals
from ferrymq.engine.deadletter import dead_letter
from ferrymq.engine.message import Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.remote import RemoteNames, xmit_descriptor
from ferrymq.engine.session import UnitOfWork
from ferrymq.engine.state import EngineState
from ferrymq.errors import DecodeError, MQError
from ferrymq.mq import constants as C
from ferrymq.wire.headers import report_data
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqxqh import pack_xmit

log = logging.getLogger("ferrymq.engine")

# (base option, *_WITH_DATA, *_WITH_FULL_DATA): the data bits add to the base bit.
_COA = (C.MQRO_COA, C.MQRO_COA_WITH_DATA, C.MQRO_COA_WITH_FULL_DATA)
_COD = (C.MQRO_COD, C.MQRO_COD_WITH_DATA, C.MQRO_COD_WITH_FULL_DATA)
_EXPIRATION = (C.MQRO_EXPIRATION, C.MQRO_EXPIRATION_WITH_DATA, C.MQRO_EXPIRATION_WITH_FULL_DATA)
_EXCEPTION = (C.MQRO_EXCEPTION, C.MQRO_EXCEPTION_WITH_DATA, C.MQRO_EXCEPTION_WITH_FULL_DATA)
ANY_REPORT = C.MQRO_COA | C.MQRO_COD | C.MQRO_EXPIRATION | C.MQRO_EXCEPTION
_NO_CONFIRMATIONS = {C.MQFMT_DEAD_LETTER_HEADER.rstrip(), C.MQFMT_XMIT_Q_HEADER.rstrip()}


def data_amount(report: int, family: tuple[int, int, int]) -> int | None:
    """How much data a report of ``family`` carries: -1 none requested, 0, 100, or None (all)."""
    base, with_data, full = family
    if report & full == full:
        return None
    if report & with_data == with_data:
        return 100
    return 0 if report & base else -1


def report_descriptor(original: MQMD, feedback: int, new_msg_id: bytes, remaining_expiry: int, qmgr_name: str,
                      put_date: str, put_time: str) -> MQMD:
    """The MQMD of a report on ``original`` (see the module docstring for each field)."""
    report = original.report
    pass_on = bool(report & C.MQRO_PASS_DISCARD_AND_EXPIRY)
    return original.replace(
        version=C.MQMD_VERSION_2,
        report=(report & C.MQRO_DISCARD_MSG) if pass_on else C.MQRO_NONE,
        msg_type=C.MQMT_REPORT,
        expiry=remaining_expiry if pass_on else C.MQEI_UNLIMITED,
        feedback=feedback,
        msg_id=original.msg_id if report & C.MQRO_PASS_MSG_ID else new_msg_id,
        correl_id=original.correl_id if report & C.MQRO_PASS_CORREL_ID else original.msg_id,
        backout_count=0,
        reply_to_q="",
        reply_to_q_mgr=qmgr_name,
        put_appl_type=C.MQAT_QMGR,
        put_appl_name=qmgr_name[:28],
        put_date=put_date,
        put_time=put_time,
        appl_origin_data="",
        group_id=bytes(24),
        msg_seq_number=1,
        offset=0,
        msg_flags=C.MQMF_NONE,
        original_length=C.MQOL_UNDEFINED,
    )


class Reports:
    """Generating reports and delivering what the queue manager generates."""

    def __init__(self, state: EngineState, arrivals: Arrivals) -> None:
        self.state = state
        self.name = state.name
        self.clock = state.clock
        self.objects = state.objects
        self.place_message = arrivals.place
        self.next_sequence = state.staging.next_sequence
        self.remote = RemoteNames(state.name, state.objects)
        arrivals.confirm_with(self.report_arrival)

    def report_arrival(self, msg: Message, uow: UnitOfWork | None = None) -> None:
        """COA for a message just placed on its queue (called after the commit for puts in
        a unit of work)."""
        md = msg.md
        if md.report & C.MQRO_COA and md.format.rstrip() not in _NO_CONFIRMATIONS:
            self._send_report(msg, C.MQFB_COA, data_amount(md.report, _COA), uow)

    def report_delivery(self, msg: Message, uow: UnitOfWork | None) -> None:
        """COD for a message destructively got; inside the getter's unit of work if any."""
        md = msg.md
        if md.report & C.MQRO_COD and md.format.rstrip() not in _NO_CONFIRMATIONS:
            self._send_report(msg, C.MQFB_COD, data_amount(md.report, _COD), uow)

    def report_expiry(self, msg: Message) -> None:
        """An expiration report for a message being discarded because it expired."""
        if msg.md.report & C.MQRO_EXPIRATION:
            self._send_report(msg, C.MQFB_EXPIRATION, data_amount(msg.md.report, _EXPIRATION), None)

    def report_exception(self, msg: Message, feedback: int) -> None:
        """An exception report: the queue manager accepted ``msg`` but cannot deliver it."""
        if msg.md.report & C.MQRO_EXCEPTION:
            self._send_report(msg, feedback, data_amount(msg.md.report, _EXCEPTION), None)

    # -- building and delivering ---------------------------------------------------------

    def _send_report(self, msg: Message, feedback: int, amount: int | None, uow: UnitOfWork | None) -> None:
        original = msg.md
        now = self.clock.now()
        date, tod = self.state.stamp_put(now)
        md = report_descriptor(original, feedback, self.state.new_id(), msg.remaining_expiry(now), self.name, date, tod)
        data = b""
        if amount is None or amount > 0:
            try:
                data = report_data(msg.data, original.format, original.encoding, original.coded_char_set_id, amount)
            except DecodeError:  # a malformed header chain: the data as it is, cut as asked
                data = msg.data if amount is None else msg.data[:amount]
        self.deliver_generated(md, data, original.reply_to_q.strip(), original.reply_to_q_mgr.strip(), uow)

    def deliver_generated(self, md: MQMD, data: bytes, queue: str, qmgr: str, uow: UnitOfWork | None) -> None:
        """Put a message the queue manager made to ``queue`` at ``qmgr``: at another queue
        manager, on the transmission queue that leads there behind an MQXQH, as a put would;
        if it cannot go there, to the dead-letter queue (unless it asks to be discarded)."""
        target, reason = self._route(queue, qmgr, md, data)
        if reason == C.MQRC_UNKNOWN_REMOTE_Q_MGR:
            target, reason, md, data = self._route_remote(queue, qmgr, md, data)
        if target is None:
            if md.report & C.MQRO_DISCARD_MSG:
                log.info("event=report_discarded queue=%s qmgr=%s reason=%d", queue, qmgr, reason)
                return
            state = self.state
            date, tod = state.stamp_put(self.clock.now())
            md, data = dead_letter(self.name, state.qmgr_attr("CCSID"), md, data, reason, queue, date, tod)
            dlq = state.dead_letter_queue()
            if dlq is None or not self._fits(dlq, md, data):
                log.warning("event=report_undeliverable queue=%s qmgr=%s reason=%d feedback=%d msg_id=%s", queue, qmgr,
                            reason, md.feedback, md.msg_id.hex())
                return
            target = dlq
            log.warning("event=message_dead_lettered source=report queue=%s qmgr=%s dlq=%s reason=%d feedback=%d "
                        "msg_id=%s length=%d", queue, qmgr, dlq.name, reason, md.feedback, md.msg_id.hex(), len(data))
        self.place_message(target, Message(target.name, self.next_sequence(target), md, data, self.clock.now(),
                                           target.fifo), uow)

    def _route(self, queue: str, qmgr: str, md: MQMD, data: bytes) -> tuple[QueueObject | None, int]:
        """The local queue a generated message goes to, or None and the reason it cannot."""
        if qmgr and qmgr != self.name:
            return None, C.MQRC_UNKNOWN_REMOTE_Q_MGR
        obj = self.objects.find(queue) if queue else None
        if obj is not None and obj.qtype == A.QALIAS:
            if obj["PUT"] == C.MQQA_PUT_INHIBITED:
                return None, C.MQRC_PUT_INHIBITED
            obj = self.objects.find(str(obj["TARGET"]))
        if obj is None or not obj.is_local:
            return None, C.MQRC_UNKNOWN_OBJECT_NAME
        if obj["PUT"] == C.MQQA_PUT_INHIBITED:
            return None, C.MQRC_PUT_INHIBITED
        if obj.messages.depth >= int(obj["MAXDEPTH"]):
            return None, C.MQRC_Q_FULL
        if len(data) > int(obj["MAXMSGL"]):
            return None, C.MQRC_MSG_TOO_BIG_FOR_Q
        if md.persistence == C.MQPER_PERSISTENT and obj.temporary:
            return None, C.MQRC_PERSISTENT_NOT_ALLOWED
        return obj, C.MQRC_NONE

    def _route_remote(self, queue: str, qmgr: str, md: MQMD, data: bytes) -> tuple[QueueObject | None, int, MQMD,
                                                                                   bytes]:
        """A generated message for another queue manager: the transmission queue of the
        route there, and the message as it goes on it (engine.remote, as MQPUT makes it)."""
        try:
            route = self.remote.for_qmgr(queue, qmgr)
        except MQError as exc:
            return None, exc.reason, md, data
        if route is None:  # a queue-manager alias that leads back here
            target, reason = self._route(queue, self.name, md, data)
            return target, reason, md, data
        ccsid = int(self.state.qmgr_attr("CCSID"))
        wrapped = pack_xmit(route.q_name, route.q_mgr_name, md, ccsid=ccsid) + data
        xmd = xmit_descriptor(md, ccsid)
        if not self._fits(route.xmitq, xmd, wrapped):
            return None, C.MQRC_Q_FULL, md, data
        return route.xmitq, C.MQRC_NONE, xmd, wrapped

    def _fits(self, q: QueueObject, md: MQMD, data: bytes) -> bool:
        return (q.is_local and q["PUT"] == C.MQQA_PUT_ALLOWED and q.messages.depth < int(q["MAXDEPTH"])
                and len(data) <= int(q["MAXMSGL"]) and not (md.persistence == C.MQPER_PERSISTENT and q.temporary))
