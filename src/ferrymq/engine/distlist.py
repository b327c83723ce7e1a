"""Distribution lists: MQOPEN with object records, MQPUT and MQPUT1 with put-message records.

IBM MQ's rules, as applied here:

- MQOPEN of an MQOD version 2 with RecsPresent > 0 opens every object record's queue
  (ObjectName at ObjectQMgrName) for output as a single handle. Each record gets its own
  response (MQRR): CompCode and Reason of its open. KnownDestCount counts the local queues
  opened, UnknownDestCount the queues on other queue managers (their transmission queue
  was opened), InvalidDestCount the records that failed. Only output, context, alternate
  user and fail-if-quiescing options are allowed (else 2045 for the whole call, nothing
  opened); a model queue cannot be a destination (2045 in its record).
- The call's own CompCode and Reason (``overall``): the records' one reason when they all
  agree, else MQRC_MULTIPLE_REASONS (2136); MQCC_FAILED when no destination succeeded
  (nothing stays open), MQCC_WARNING when some did.
- MQPUT through such a handle puts one copy per destination with the put-message record's
  fields (PutMsgRecFields: MsgId, CorrelId, GroupId, Feedback, AccountingToken) in place of
  the descriptor's; records that failed at MQOPEN count as invalid again with their open's
  reason. A new MsgId is made for each destination (MQPMO_NEW_MSG_ID, or a blank MsgId).
  AccountingToken in the records needs MQPMO_SET_IDENTITY_CONTEXT or SET_ALL_CONTEXT, and
  PutMsgRecFields must hold MQPMRF_* bits only: MQRC_PMO_RECORD_FLAGS_ERROR (2158) otherwise.
- Destinations on another queue manager that share a transmission queue and a queue
  manager travel as one message: MQXQH (RemoteQName blank, RemoteQMgrName that queue
  manager), then an MQDH with one MQOR and one MQPMR per destination (MsgId always, since
  each destination has its own), then the data (the MQDH's Encoding, CodedCharSetId and
  Format describe it). A lone remote destination travels behind its MQXQH as any put.
  The receiving agent splits it (ferrymq.channels.receiver).
- MQPUT1 with object records opens the list, puts and closes: nothing stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ferrymq.engine import validate
from ferrymq.engine.api import ObjectDescriptor, OpenResult, PutOptions, PutRequest, PutResult
from ferrymq.engine.message import Message
from ferrymq.engine.opening import Opener
from ferrymq.engine.putting import Putter
from ferrymq.engine.remote import xmit_descriptor
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import EngineState
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.wire import mqdh
from ferrymq.wire.mqmd import MQMD, NONE_ID
from ferrymq.wire.mqxqh import pack_xmit

LIST_OPEN_OK = (C.MQOO_OUTPUT | C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                | C.MQOO_SET_ALL_CONTEXT | C.MQOO_FAIL_IF_QUIESCING | C.MQOO_ALTERNATE_USER_AUTHORITY)
_SET_IDENTITY = C.MQPMO_SET_IDENTITY_CONTEXT | C.MQPMO_SET_ALL_CONTEXT
OK = (C.MQCC_OK, C.MQRC_NONE)


@dataclass(slots=True)
class ListOutcome:
    """What MQOPEN, MQPUT or MQPUT1 of a distribution list returns: the call's CompCode and
    Reason, one (CompCode, Reason) per object record, the three counts, and for a put each
    destination's MsgId and CorrelId as put (zeros where it failed) and the first stored
    descriptor."""

    comp: int
    reason: int
    responses: list[tuple[int, int]]
    known: int = 0
    unknown: int = 0
    invalid: int = 0
    hobj: int = 0
    ids: list[tuple[bytes, bytes]] = field(default_factory=list)
    md: MQMD | None = None


def overall(responses: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The call's CompCode and Reason from its records' (see the module docstring)."""
    reasons = {reason for _, reason in responses}
    worst = max((comp for comp, _ in responses), default=C.MQCC_OK)
    if len(reasons) == 1:
        return worst, reasons.pop()
    some_ok = any(comp != C.MQCC_FAILED for comp, _ in responses)
    return (C.MQCC_WARNING if some_ok else C.MQCC_FAILED), C.MQRC_MULTIPLE_REASONS


def apply_record(md: MQMD, fields: int, pmr: mqdh.MQPMR | None) -> MQMD:
    """``md`` with the fields a put-message record holds (PutMsgRecFields) in place of its own."""
    if pmr is None or not fields:
        return md
    changes: dict[str, object] = {}
    if fields & C.MQPMRF_MSG_ID:
        changes["msg_id"] = pmr.msg_id
    if fields & C.MQPMRF_CORREL_ID:
        changes["correl_id"] = pmr.correl_id
    if fields & C.MQPMRF_GROUP_ID:
        changes["group_id"] = pmr.group_id
    if fields & C.MQPMRF_FEEDBACK:
        changes["feedback"] = pmr.feedback
    if fields & C.MQPMRF_ACCOUNTING_TOKEN:
        changes["accounting_token"] = pmr.accounting_token
    return md.replace(**changes)


def check_record_fields(fields: int, options: int) -> None:
    """PutMsgRecFields against MQPMRF_* and the put's context options.

    Raises:
        MQError: MQRC_PMO_RECORD_FLAGS_ERROR (2158).
    """
    if fields & ~mqdh.PMRF_ALL:
        raise failed(C.MQRC_PMO_RECORD_FLAGS_ERROR, f"PutMsgRecFields {fields:#x} has bits other than MQPMRF_*")
    if fields & C.MQPMRF_ACCOUNTING_TOKEN and not options & _SET_IDENTITY:
        raise failed(C.MQRC_PMO_RECORD_FLAGS_ERROR,
                     "MQPMRF_ACCOUNTING_TOKEN needs MQPMO_SET_IDENTITY_CONTEXT or MQPMO_SET_ALL_CONTEXT")


def _persistence(h: Handle, md: MQMD) -> int:
    definer = h.alias or h.queue
    assert definer is not None
    return int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF else md.persistence


class Distributor:
    """Distribution lists of one queue manager (see the module docstring)."""

    def __init__(self, state: EngineState, opener: Opener, putter: Putter,
                 open_: Callable[[int, ObjectDescriptor, int], OpenResult], close: Callable[[int, int], None]) -> None:
        self.state, self.opener, self.putter = state, opener, putter
        # the queue manager's MQOPEN and MQCLOSE, with their events and counts
        self.open_one, self.close_one = open_, close

    # -- MQOPEN ------------------------------------------------------------------------------
    def open(self, hconn: int, records: Sequence[tuple[str, str]], options: int,
             alternate_user_id: str = "") -> ListOutcome:
        """MQOPEN of a distribution list; a handle is made when any destination opened.

        Raises:
            MQError: for the whole call, before anything opens: 2018 connection, 2046 or
                2045 options, 2154 no records.
        """
        state = self.state
        conn = state.conn(hconn)
        validate.open_options(options)
        if not records:
            raise failed(C.MQRC_RECS_PRESENT_ERROR, "a distribution list needs at least one object record")
        if not options & C.MQOO_OUTPUT or options & ~LIST_OPEN_OK:
            raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE,
                         "a distribution list opens for MQOO_OUTPUT (with context, alternate user and "
                         "fail-if-quiescing options) only")
        state.check_quiescing(options, C.MQOO_FAIL_IF_QUIESCING)
        members: list[Handle | None] = []
        responses: list[tuple[int, int]] = []
        known = unknown = 0
        for name, qmgr in records:
            try:
                obj = state.objects.find(name.strip()) if self.putter.remote.is_local(qmgr) else None
                if obj is not None and obj.qtype == "QMODEL":
                    raise failed(C.MQRC_OPTION_NOT_VALID_FOR_TYPE, f"{obj.name} is a model queue: no list destination")
                opened = self.open_one(hconn, ObjectDescriptor(object_name=name, object_q_mgr_name=qmgr,
                                                               alternate_user_id=alternate_user_id), options)
            except MQError as exc:
                members.append(None)
                responses.append((exc.comp, exc.reason))
                continue
            member = conn.handles[opened.hobj]
            members.append(member)
            responses.append(OK)
            if member.remote is not None:
                unknown += 1
            else:
                known += 1
        comp, reason = overall(responses)
        invalid = len(records) - known - unknown
        if comp == C.MQCC_FAILED:
            return ListOutcome(comp, reason, responses, known, unknown, invalid)
        hobj = self.opener.add_handle(conn, Handle(0, hconn, options, "", None)).hobj
        h = conn.handles[hobj]
        h.members = members
        h.member_reasons = responses
        return ListOutcome(comp, reason, responses, known, unknown, invalid, hobj)

    # -- MQPUT ---------------------------------------------------------------------------------
    def put(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions, data: bytes, fields: int = 0,
            records: Sequence[mqdh.MQPMR] = (), properties: Mapping[str, object] | None = None) -> ListOutcome:
        """MQPUT through a distribution list's handle (see the module docstring).

        Raises:
            MQError: for the whole call, before anything is put: 2018, 2019, 2039, 2046,
                2158, the descriptor's and the context options' reasons.
        """
        putter = self.putter
        state = self.state
        conn = state.conn(hconn)
        h = state.handle(conn, hobj)
        if h.members is None:
            raise failed(C.MQRC_HOBJ_ERROR, f"object handle {hobj} is not a distribution list")
        check_record_fields(fields, pmo.options)
        conn, h, warning = putter.check_put(hconn, hobj, md, pmo)
        members = h.members
        assert members is not None
        responses: list[tuple[int, int]] = []
        ids: list[tuple[bytes, bytes]] = []
        first: MQMD | None = None
        known = unknown = 0
        singles: list[tuple[int, Handle, MQMD]] = []  # placed as any MQPUT through the member's handle
        groups: dict[tuple[str, str], list[tuple[int, Handle, MQMD]]] = {}
        for i, member in enumerate(members):
            responses.append(h.member_reasons[i] if member is None else OK)
            ids.append((NONE_ID, NONE_ID))
            if member is None:
                continue
            md_i = apply_record(md, fields, records[i] if i < len(records) else None)
            route = member.remote
            if route is None:
                singles.append((i, member, md_i))
                continue
            # a destination's own refusal (its QREMOTE's PUT(DISABLED)) keeps it out of a group
            refusal = putter.put_limits(member, _persistence(member, md_i)).fixed
            if refusal is not None:
                responses[i] = (refusal.comp, refusal.reason)
            else:
                groups.setdefault((route.xmitq.name, route.q_mgr_name), []).append((i, member, md_i))
        singles += [group[0] for group in groups.values() if len(group) == 1]
        for i, member, md_i in singles:
            try:
                result = putter.place(conn, member, md_i, pmo, data, warning, properties)
            except MQError as exc:
                responses[i] = (exc.comp, exc.reason)
                continue
            responses[i] = (result.comp, result.reason)
            ids[i] = (result.md.msg_id, result.md.correl_id)
            first = first or result.md
            if member.remote is None:
                known += 1
            else:
                unknown += 1
        for group in groups.values():
            if len(group) == 1:
                continue
            try:
                stored = self._put_group(conn, group, pmo, data, fields, warning, properties)
            except MQError as exc:
                for i, _, _ in group:
                    responses[i] = (exc.comp, exc.reason)
                continue
            for (i, _, _), md_i in zip(group, stored, strict=True):
                responses[i] = (C.MQCC_WARNING, warning) if warning else OK
                ids[i] = (md_i.msg_id, md_i.correl_id)
                first = first or md_i
                unknown += 1
        comp, reason = overall(responses)
        return ListOutcome(comp, reason, responses, known, unknown, len(members) - known - unknown, hobj, ids, first)

    def _put_group(self, conn: Connection, group: list[tuple[int, Handle, MQMD]], pmo: PutOptions, data: bytes,
                   fields: int, warning: int, properties: Mapping[str, object] | None) -> list[MQMD]:
        """One message on the transmission queue for several destinations at one queue
        manager: MQXQH, MQDH with their records, the data. Returns each destination's
        descriptor as stored (its own MsgId).

        Raises:
            MQError: the transmission queue's refusal (nothing is put).
        """
        putter = self.putter
        first = group[0][1]
        q = first.queue
        route = first.remote
        assert q is not None and route is not None
        md0 = group[0][2]
        definer = first.alias or q
        priority = int(definer.attrs["DEFPRTY"]) if md0.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md0.priority
        persistence = _persistence(first, md0)
        now = self.state.clock.now()
        stored: list[MQMD] = []
        for _, member, md_i in group:
            # each destination its own MsgId: MQPMO_NEW_MSG_ID or a blank one asks for new
            stored.append(putter.fill_descriptor(conn, member, md_i, pmo, priority, persistence, now))
        # MsgId always travels in the records (each destination's differs); the rest as asked
        rec_fields = fields | C.MQPMRF_MSG_ID | (C.MQPMRF_CORREL_ID if pmo.options & C.MQPMO_NEW_CORREL_ID else 0)
        header = mqdh.MQDH(
            encoding=md0.encoding, coded_char_set_id=md0.coded_char_set_id, format=md0.format,
            put_msg_rec_fields=rec_fields,
            objects=tuple(mqdh.MQOR(m.remote.q_name, m.remote.q_mgr_name) for _, m, _ in group if m.remote),
            put_msg_recs=tuple(mqdh.MQPMR(s.msg_id, s.correl_id, s.group_id, s.feedback, s.accounting_token)
                               for s in stored))
        ccsid = int(self.state.qmgr_attr("CCSID"))
        outer = stored[0].replace(format=mqdh.FORMAT, encoding=C.MQENC_NATIVE, coded_char_set_id=ccsid)
        body = pack_xmit("", route.q_mgr_name, outer, ccsid=ccsid) + header.pack() + bytes(data)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        refusal = putter.put_limits(first, persistence).refusal(len(body), conn.uow if in_uow else None)
        if refusal is not None:
            raise refusal
        msg = Message(q.name, putter.next_sequence(q), xmit_descriptor(outer, ccsid), body, now,
                      q.attrs.get("MSGDLVSQ") == C.MQMDS_FIFO)
        msg.properties = PropertySet.of(properties) if properties else None
        putter.place_message(q, msg, putter.uow_of(conn) if in_uow else None)
        q.last_put = now
        return stored

    def plain_put(self, req: PutRequest, md: MQMD, pmo: PutOptions) -> PutResult:
        """An MQPUT (or a run of them) through a list's handle without put-message records,
        as a put with an MQPMO version 1 makes: the call's outcome alone."""
        if req.datas is None:
            out = self.put(req.hconn, req.hobj, md, pmo, req.data, properties=req.properties)
            if out.comp == C.MQCC_FAILED:
                raise MQError(out.comp, out.reason, "no destination of the distribution list took the message")
            return PutResult(out.md or md, "", self.state.name, out.comp, out.reason)
        outcomes: list[MQError | None] = []
        for i, data in enumerate(req.datas):
            md_i = md.with_ids(md.msg_id if req.msg_ids is None else req.msg_ids[i],
                               md.correl_id if req.correl_ids is None else req.correl_ids[i])
            try:
                out = self.put(req.hconn, req.hobj, md_i, pmo, data)
            except MQError as exc:
                outcomes.append(exc)
                continue
            outcomes.append(None if out.comp == C.MQCC_OK else MQError(out.comp, out.reason, "distribution list"))
        return PutResult(md, "", self.state.name, outcomes=outcomes)

    # -- MQPUT1 --------------------------------------------------------------------------------
    def put1(self, hconn: int, records: Sequence[tuple[str, str]], md: MQMD, pmo: PutOptions, data: bytes,
             fields: int = 0, pmrs: Sequence[mqdh.MQPMR] = (), alternate_user_id: str = "",
             properties: Mapping[str, object] | None = None) -> ListOutcome:
        """MQPUT1 to a distribution list: open, put, close as one call.

        Raises:
            MQError: the whole call's refusals (see ``open`` and ``put``); nothing stays open.
        """
        check_record_fields(fields, pmo.options)
        validate.put_options(pmo.options)
        validate.descriptor_for_put(md)
        oo = C.MQOO_OUTPUT
        for flag, open_flag in ((C.MQPMO_PASS_IDENTITY_CONTEXT, C.MQOO_PASS_IDENTITY_CONTEXT),
                                (C.MQPMO_PASS_ALL_CONTEXT, C.MQOO_PASS_ALL_CONTEXT),
                                (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQOO_SET_IDENTITY_CONTEXT),
                                (C.MQPMO_SET_ALL_CONTEXT, C.MQOO_SET_ALL_CONTEXT),
                                (C.MQPMO_FAIL_IF_QUIESCING, C.MQOO_FAIL_IF_QUIESCING),
                                (C.MQPMO_ALTERNATE_USER_AUTHORITY, C.MQOO_ALTERNATE_USER_AUTHORITY)):
            if pmo.options & flag:
                oo |= open_flag
        opened = self.open(hconn, records, oo, alternate_user_id)
        if not opened.hobj:
            return opened
        try:
            result = self.put(hconn, opened.hobj, md, pmo, data, fields, pmrs, properties)
        finally:
            self.close_one(hconn, opened.hobj)
        result.hobj = 0
        return result
