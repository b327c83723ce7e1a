"""MQPUT, MQGET and browse: validation, queue placement, search, waits, expiry.

Every refusal raises before anything changes. Search order is the queue's key order
(priority then sequence, or sequence alone on FIFO queues); an expired message met by a
search is discarded then and there, as IBM MQ does, and never returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat

from ferrymq.engine import propctl, validate
from ferrymq.engine.api import GetOptions, GetResult, PersistentNext, PutOptions, PutResult, Waiting
from ferrymq.engine.handover import answer_first, give, hand_over, taker
from ferrymq.engine.message import Message
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.putplan import NO_ACCOUNTING, PutLimits, PutPlan, own_context
from ferrymq.engine.session import Connection, Handle, UnitOfWork
from ferrymq.engine.state import Waiter
from ferrymq.engine.waits import Waits
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD, NONE_ID

_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_CURSOR = C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_PASS_IDENT_OK = (C.MQOO_PASS_IDENTITY_CONTEXT | C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_IDENTITY_CONTEXT
                  | C.MQOO_SET_ALL_CONTEXT)
_CONTEXT_OPTIONS = (C.MQPMO_NO_CONTEXT | C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT
                    | C.MQPMO_SET_IDENTITY_CONTEXT | C.MQPMO_SET_ALL_CONTEXT)
# Put options under which place() decides something per message (a run cannot share it):
# passing context may fail per put (MQRC_CONTEXT_HANDLE_ERROR); set or no context is the
# descriptor's or none, the same for every message of a run.
_PER_MESSAGE_PUT_OPTIONS = C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT | C.MQPMO_NEW_CORREL_ID
_CONTEXT_RULES = (
    (C.MQPMO_PASS_IDENTITY_CONTEXT, _PASS_IDENT_OK, C.MQRC_NOT_OPEN_FOR_PASS_IDENT),
    (C.MQPMO_PASS_ALL_CONTEXT, C.MQOO_PASS_ALL_CONTEXT | C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_PASS_ALL),
    (C.MQPMO_SET_IDENTITY_CONTEXT, C.MQOO_SET_IDENTITY_CONTEXT | C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_IDENT),
    (C.MQPMO_SET_ALL_CONTEXT, C.MQOO_SET_ALL_CONTEXT, C.MQRC_NOT_OPEN_FOR_SET_ALL),
)
_CONTEXT_RULE_FLAGS = sum(flag for flag, _, _ in _CONTEXT_RULES)


def _selects_everything(md: MQMD, gmo: GetOptions) -> bool:
    """Whether a destructive get takes whatever comes first in delivery order: no match
    option that names an identifier, no cursor. Must agree with ``search``."""
    mo = gmo.match_options
    if gmo.options & (_BROWSE | C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT):
        return False
    return not ((mo & C.MQMO_MATCH_MSG_ID and md.msg_id != NONE_ID)
                or (mo & C.MQMO_MATCH_CORREL_ID and md.correl_id != NONE_ID)
                or (mo & C.MQMO_MATCH_GROUP_ID and md.group_id != NONE_ID)
                or mo & (C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET)
                or (mo & C.MQMO_MATCH_MSG_TOKEN and gmo.msg_token != bytes(16)))


_UNBOUNDED = 1 << 62  # get_many without a frame bound


def _cost(data: int, properties: PropertySet | None, framing: int) -> int:
    """What a message adds to a reply frame (``get_many``'s hard bound)."""
    return data + framing + (len(props_model.pack(properties)) if properties else 0)


class Messaging(Waits):
    """put, get and their helpers; mixed into QueueManager."""

    # -- put -------------------------------------------------------------------------------
    def put(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions, data: bytes,
            properties: Mapping[str, object] | None = None) -> PutResult:
        """MQPUT. ``properties`` are the message handle's (a PropertySet keeps its types; a
        plain mapping's are inferred); an MQRFH2 at the start of the data adds its own.

        Raises:
            MQError: IBM's reason for every refusal (see validate.py and _place).
        """
        conn = self.connections.get(hconn)
        h = None if conn is None else conn.handles.get(hobj)
        if h is not None:
            plan = h.put_plan
            if (plan is not None and plan.epoch == self.objects.epoch and plan.options == pmo.options
                    and not properties and plan.steady == md.steady_key() and not h.deleted):
                assert conn is not None
                return self._put_planned(conn, h, plan, md.msg_id, md.correl_id, data)
        conn, h, warning = self._check_put(hconn, hobj, md, pmo)
        result = self.place(conn, h, md, pmo, data, warning, properties)
        h.put_plan = None if properties else self._plan(conn, h, md, pmo, warning)
        return result

    def put_raw(self, hconn: int, hobj: int, raw: bytes, options: int, context: int, data: bytes) -> PutResult:
        """``put(hconn, hobj, MQMD.decode(raw), PutOptions(options, context), data)`` for a
        descriptor still in its bytes (decoding one is taking its bytes: the plan's check is
        a comparison of them).

        Raises:
            MQError: as ``put``.
        """
        return self.put(hconn, hobj, MQMD.decode(raw), PutOptions(options, context), data)

    def _put_planned(self, conn: Connection, h: Handle, plan: PutPlan, msg_id: bytes, correl_id: bytes,
                     data: bytes) -> PutResult:
        """``place`` for a put that its handle's plan covers: what ``_check_put`` and
        ``place`` would work out from the handle, options and descriptor is the plan's
        (the descriptor's own: its MsgId and CorrelId)."""
        limits = plan.limits
        q = limits.queue
        in_uow = plan.in_uow
        refusal = limits.refusal(len(data), conn, in_uow)
        if refusal is not None:
            raise refusal
        now = self.clock.now()
        opts = plan.options
        # MsgId, then CorrelId: new identifiers are made in fill_descriptor's order
        if opts & C.MQPMO_NEW_MSG_ID or msg_id == NONE_ID:
            msg_id = self.new_id()
        if opts & C.MQPMO_NEW_CORREL_ID:
            correl_id = self.new_id()
        date, tod = self.stamp_put(now)
        seq = self.next_sequence(q)
        data = bytes(data)
        taken = None if in_uow or not plan.handable else taker(self, q, msg_id, correl_id, len(data))
        stored = plan.stored(msg_id, correl_id, date, tod)
        if taken is not None:  # handed over: no Message is made unless take or a report needs one
            raw = stored.pack()
            answered = answer_first(self, q, taken, plan.report, raw, data, seq)
            give(self, q, taken, stored, raw, data, seq, now, None, plan.fifo, answered)
        else:
            msg = Message(q.name, seq, stored, data, now, plan.fifo)
            self.place_message(q, msg, self.uow_of(conn) if in_uow else None)
        q.last_put = now
        return PutResult(stored, q.name, self.name, plan.comp, plan.warning, seq)

    def _plan(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, warning: int) -> PutPlan | None:
        """The plan for the next put through ``h`` with these options and descriptor fields
        (just put by ``place``); None where ``place`` decides per message (see putplan)."""
        q = h.queue
        assert q is not None
        qa = q.attrs
        opts = pmo.options
        if (opts & _CONTEXT_OPTIONS or md.format.rstrip() == "MQHRF2" or qa["PROPCTL"] == C.MQPROP_V6COMPAT):
            return None
        definer = h.alias or q
        priority = int(definer.attrs["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = (int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
                       else md.persistence)
        base = md.with_put_context(NONE_ID, NONE_ID, priority, persistence, md.reply_to_q_mgr or self.name,
                                own_context(conn, "", ""))
        return PutPlan(self.objects.epoch, opts, md.steady_key(), warning, self.put_limits(h, persistence),
                       qa.get("MSGDLVSQ") == C.MQMDS_FIFO, base)

    def put_many(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions,
                 items: Sequence[tuple[bytes, bytes]]) -> list[MQError | None]:
        """Several MQPUTs on one handle that differ only in MsgId and data (asynchronous
        puts a client sent as one batch); see ``put_columns``."""
        return self.put_columns(hconn, hobj, md, pmo, [data for _, data in items], [m for m, _ in items])

    def put_columns(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions, datas: Sequence[bytes],
                    msg_ids: Sequence[bytes] | None = None,
                    correl_ids: Sequence[bytes] | None = None) -> list[MQError | None]:
        """Several MQPUTs on one handle whose descriptors are ``md`` but for each message's
        MsgId and CorrelId (``msg_ids``/``correl_ids``: 24 bytes per message; None: md's for
        every one). The handle, options and descriptor are checked once, as each MQPUT would
        check them; then every message is placed in order.

        Returns one outcome per message: None, or the MQError (a failure, or a warning such
        as MQRC_PRIORITY_EXCEEDS_MAXIMUM) that MQPUT would have returned for it.
        """
        try:
            conn, h, warning = self._check_put(hconn, hobj, md, pmo)
        except MQError as exc:
            return [exc] * len(datas)
        ok = None if not warning else MQError(C.MQCC_WARNING, warning, "the put succeeded with a warning")
        q = h.queue
        assert q is not None
        if any(col is not None and len(col) != len(datas) for col in (msg_ids, correl_ids)):
            raise ValueError("put_columns: an identifier column's length differs from the data's")
        # strict=False: a column left out is md's identifier repeated without end
        ids = zip(repeat(md.msg_id) if msg_ids is None else msg_ids,
                  repeat(md.correl_id) if correl_ids is None else correl_ids, datas, strict=False)
        if (not pmo.options & _PER_MESSAGE_PUT_OPTIONS and q.attrs["PROPCTL"] != C.MQPROP_V6COMPAT
                and md.format.rstrip() != "MQHRF2"):
            return self._place_run(conn, h, md, pmo, ids, len(datas), ok)
        outcomes: list[MQError | None] = []
        note = outcomes.append
        for msg_id, correl_id, data in ids:
            try:
                self.place(conn, h, md.with_ids(msg_id, correl_id), pmo, data, warning)
            except MQError as exc:
                note(exc)
            else:
                note(ok)
        return outcomes

    def _place_run(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions,
                   rows: Iterable[tuple[bytes, bytes, bytes]], count: int, ok: MQError | None) -> list[MQError | None]:
        """``place`` for each (MsgId, CorrelId, data), with what cannot differ between them
        done once.

        The messages share the handle, options and descriptor, so the queue's attributes,
        priority, persistence, context and put time are resolved once for the run, and the
        messages share one stored descriptor (a template: see Message) with their own
        identifiers. What can differ is still checked per message and in ``place``'s order:
        the data's length, then the queue's refusals, then depth and the unit of work's
        size. Callers exclude what ``place`` decides per message: properties in an MQRFH2,
        PROPCTL(V6COMPAT), passed context and new CorrelIds.
        """
        q = h.queue
        assert q is not None
        qa = q.attrs
        definer = h.alias or q
        priority = int(definer["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = int(definer["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF else md.persistence
        now = self.clock.now()
        stored = self.fill_descriptor(conn, h, md, pmo, priority, persistence, now, NONE_ID)
        expiry = stored.expiry
        new_ids = bool(pmo.options & C.MQPMO_NEW_MSG_ID)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        uow = conn.uow if in_uow else None  # made by the first message placed, as place does
        fifo = qa.get("MSGDLVSQ") == C.MQMDS_FIFO
        messages, name, persistent = q.messages, q.name, persistence == C.MQPER_PERSISTENT
        coa = bool(stored.report & C.MQRO_COA)
        outcomes: list[MQError | None] = []
        note = outcomes.append
        placed = False
        refusal_of = self.put_limits(h, persistence).refusal
        id_prefix, id_tail = self.reserve_ids(count)  # one clock read for the run's new MsgIds
        for msg_id, correl_id, data in rows:
            refusal = refusal_of(len(data), conn, in_uow)
            if refusal is not None:
                note(refusal)
            else:
                if new_ids or msg_id == NONE_ID:
                    msg_id = id_prefix + id_tail.to_bytes(8, "big")
                    id_tail += 1
                msg = Message(name, self.next_sequence(q), None, bytes(data), now, fifo,
                              fields=(expiry, priority, persistence, msg_id, correl_id), template=stored)
                if in_uow:
                    if uow is None:
                        uow = self.uow_of(conn)
                    self.place_message(q, msg, uow)
                else:  # place_message without the wake: waiters are woken once, after the run
                    if persistent:
                        self.journal_message(msg)
                        self.need_sync()
                    messages.insert(msg)
                    if coa:
                        self.report_arrival(msg)
                placed = True
                note(ok)
        if placed:
            q.last_put = now
            if not in_uow:
                self.wake(q)
                if persistent:
                    self.pager.settle()
        return outcomes

    def _check_put(self, hconn: int, hobj: int, md: MQMD, pmo: PutOptions) -> tuple[Connection, Handle, int]:
        """MQPUT's checks of the handle, options and descriptor; returns the warning reason.

        Raises:
            MQError: the first rule the call breaks.
        """
        conn = self.conn(hconn)
        h = self.handle(conn, hobj)
        if h.queue is None or not h.options & C.MQOO_OUTPUT:
            raise failed(C.MQRC_NOT_OPEN_FOR_OUTPUT, f"{h.name} was not opened with MQOO_OUTPUT")
        validate.put_options(pmo.options)
        if self.quiescing:
            self.check_quiescing(pmo.options, C.MQPMO_FAIL_IF_QUIESCING)
        if pmo.options & _CONTEXT_RULE_FLAGS:
            for flag, needed, reason in _CONTEXT_RULES:
                if pmo.options & flag and not h.options & needed:
                    raise failed(reason, f"{h.name} was not opened with the context option this put needs")
        return conn, h, validate.descriptor_for_put(md)

    def place(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, data: bytes, warning: int,
              properties: Mapping[str, object] | None = None) -> PutResult:
        """Put a validated message on the handle's queue (shared by MQPUT and MQPUT1)."""
        q = h.queue
        assert q is not None
        definer = h.alias or q
        qa = q.attrs  # every put reads these: one dict, no property calls
        props = PropertySet.of(properties) if properties else None
        v6 = False
        if props or md.format.rstrip() == "MQHRF2" or qa["PROPCTL"] == C.MQPROP_V6COMPAT:
            rule = propctl.put_control(int(qa["PROPCTL"]), None if h.alias is None else int(h.alias["PROPCTL"]))
            md, data, props, v6 = propctl.on_put(md, data, props, rule)
            if props:
                propctl.check_length(props, self.qmgr_attr("MAXPROPL"))
        priority = int(definer.attrs["DEFPRTY"]) if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority
        persistence = (int(definer.attrs["DEFPSIST"]) if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
                       else md.persistence)
        in_uow = bool(pmo.options & C.MQPMO_SYNCPOINT)
        refusal = self.put_limits(h, persistence).refusal(len(data), conn, in_uow)
        if refusal is not None:
            raise refusal
        now = self.clock.now()
        stored = self.fill_descriptor(conn, h, md, pmo, priority, persistence, now)
        msg = Message(q.name, self.next_sequence(q), stored, bytes(data), now, qa.get("MSGDLVSQ") == C.MQMDS_FIFO)
        msg.properties, msg.v6 = props, v6
        if in_uow:
            self.place_message(q, msg, self.uow_of(conn))
        elif not hand_over(self, q, msg, h, now):
            self.place_message(q, msg, None)
        q.last_put = now
        comp = C.MQCC_WARNING if warning else C.MQCC_OK
        return PutResult(stored, q.name, self.name, comp, warning, msg.seq)

    def put_limits(self, h: Handle, persistence: int) -> PutLimits:
        """What may refuse a put through ``h`` (see PutLimits), read once for a message or a run."""
        q = h.queue
        assert q is not None
        qa = q.attrs
        fixed: MQError | None = None
        if h.alias is not None and h.alias["PUT"] == C.MQQA_PUT_INHIBITED:
            fixed = failed(C.MQRC_PUT_INHIBITED, f"{h.alias.name} has PUT(DISABLED)")
        elif qa["PUT"] == C.MQQA_PUT_INHIBITED:
            fixed = failed(C.MQRC_PUT_INHIBITED, f"{q.name} has PUT(DISABLED)")
        elif persistence == C.MQPER_PERSISTENT and q.deftype == C.MQQDT_TEMPORARY_DYNAMIC:
            fixed = failed(C.MQRC_PERSISTENT_NOT_ALLOWED,
                           f"{q.name} is a temporary dynamic queue; it holds no persistent messages")
        return PutLimits(q, self.qmgr_attr("MAXMSGL"), int(qa["MAXMSGL"]), fixed, int(qa["MAXDEPTH"]),
                         self.qmgr_attr("MAXUMSGS"), self.journal if persistence == C.MQPER_PERSISTENT else None,
                         -1 if persistence == C.MQPER_PERSISTENT else self.pager.limits.non_persistent_bytes)

    def fill_descriptor(self, conn: Connection, h: Handle, md: MQMD, pmo: PutOptions, priority: int,
                        persistence: int, now: float, msg_id: bytes | None = None) -> MQMD:
        """The descriptor as stored: identifiers, context and defaults resolved (``msg_id``
        given: that MsgId, whatever the options say)."""
        opts = pmo.options
        if msg_id is None:
            msg_id = self.new_id() if opts & C.MQPMO_NEW_MSG_ID or md.msg_id == NONE_ID else md.msg_id
        correl_id = self.new_id() if opts & C.MQPMO_NEW_CORREL_ID else md.correl_id
        reply_qmgr = md.reply_to_q_mgr or self.name
        if not opts & _CONTEXT_OPTIONS:  # the common case: the queue manager sets all context
            date, tod = self.stamp_put(now)
            return md.with_put_context(msg_id, correl_id, priority, persistence, reply_qmgr,
                                    own_context(conn, date, tod))
        identity: tuple[str, bytes, str]
        origin: tuple[int, str, str, str, str]
        if opts & C.MQPMO_NO_CONTEXT:
            identity = ("", NO_ACCOUNTING, "")
            origin = (C.MQAT_NO_CONTEXT, "", "", "", "")
        else:
            date, tod = self.stamp_put(now)
            identity = (conn.user[:12], NO_ACCOUNTING, "")
            origin = (conn.appl_type, conn.appl_name[-28:], date, tod, "")
        if opts & (C.MQPMO_SET_IDENTITY_CONTEXT | C.MQPMO_SET_ALL_CONTEXT):
            identity = (md.user_identifier, md.accounting_token, md.appl_identity_data)
            if opts & C.MQPMO_SET_ALL_CONTEXT:
                origin = (md.put_appl_type, md.put_appl_name, md.put_date, md.put_time, md.appl_origin_data)
        elif opts & (C.MQPMO_PASS_IDENTITY_CONTEXT | C.MQPMO_PASS_ALL_CONTEXT):
            source = conn.handles.get(pmo.context)
            if source is None or not source.options & C.MQOO_SAVE_ALL_CONTEXT:
                raise failed(C.MQRC_CONTEXT_HANDLE_ERROR, f"Context {pmo.context} is not a handle opened with MQOO_SAVE_ALL_CONTEXT")
            ctx = source.saved_context
            if ctx is not None:
                identity = (ctx.user_identifier, ctx.accounting_token, ctx.appl_identity_data)
                if opts & C.MQPMO_PASS_ALL_CONTEXT:
                    origin = (ctx.put_appl_type, ctx.put_appl_name, ctx.put_date, ctx.put_time, ctx.appl_origin_data)
        return md.with_put_context(msg_id, correl_id, priority, persistence, reply_qmgr, (*identity, *origin))

    def uow_of(self, conn: Connection) -> UnitOfWork:
        if conn.uow is None:
            conn.uow = UnitOfWork(self.new_txid())
        return conn.uow

    # -- get -------------------------------------------------------------------------------
    def get(self, hconn: int, hobj: int, md: MQMD, gmo: GetOptions, buffer_length: int) -> GetResult | Waiting:
        """MQGET (destructive or browse); a WAIT with nothing to return registers a waiter.

        Raises:
            MQError: IBM's reason for every refusal; MQRC_NO_MSG_AVAILABLE when nothing matches.
        """
        conn = self.connections.get(hconn)
        h = None if conn is None else conn.handles.get(hobj)
        opts = gmo.options
        # The checks below are a function of the handle, these options and the epoch (see
        # engine.putplan): passed once, they pass again until something changes.
        if (h is not None and h.get_checked == (self.objects.epoch, opts, gmo.match_options, gmo.msg_handle)
                and buffer_length >= 0 and gmo.wait_interval >= C.MQWI_UNLIMITED and not h.deleted):
            assert conn is not None
            return self._get_checked(conn, h, md, gmo, buffer_length)
        conn = self.conn(hconn)
        h = self.handle(conn, hobj)
        validate.get_options(opts, gmo.wait_interval, gmo.match_options, buffer_length)
        if opts & propctl.PROPERTY_OPTIONS:
            propctl.check_get(opts, gmo.msg_handle)
        browse = bool(opts & (_BROWSE | C.MQGMO_UNLOCK))
        if h.queue is None:
            raise failed(C.MQRC_NOT_OPEN_FOR_INPUT, "the queue manager object has no messages")
        if browse and not h.options & C.MQOO_BROWSE:
            raise failed(C.MQRC_NOT_OPEN_FOR_BROWSE, f"{h.name} was not opened with MQOO_BROWSE")
        if not browse and not h.input_mode:
            raise failed(C.MQRC_NOT_OPEN_FOR_INPUT, f"{h.name} was not opened for input")
        if self.quiescing:
            self.check_quiescing(opts, C.MQGMO_FAIL_IF_QUIESCING)
        self.check_get_allowed(h)
        if opts & C.MQGMO_UNLOCK:
            return self.unlock(h)
        h.get_checked = (self.objects.epoch, opts, gmo.match_options, gmo.msg_handle)
        return self._get_checked(conn, h, md, gmo, buffer_length)

    def _get_checked(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions,
                     buffer_length: int) -> GetResult | Waiting:
        """MQGET once the call's options and handle have passed their checks."""
        opts = gmo.options
        if opts & C.MQGMO_MARK_SKIP_BACKOUT and conn.uow is not None and conn.uow.marked_skip is not None:
            raise failed(C.MQRC_SECOND_MARK_NOT_ALLOWED, "a message in this unit of work is already marked skip-backout")
        q = h.queue
        assert q is not None
        # Nothing on the queue: no search can find anything (only the cursor options, which
        # fail on a message that is gone, need attempt's answer).
        if q.messages.by_seq or opts & _CURSOR:
            result = self.attempt(conn, h, md, gmo, buffer_length)
            if result is not None:
                return result
        wait = gmo.wait_interval
        if not opts & C.MQGMO_WAIT or wait == 0:
            raise failed(C.MQRC_NO_MSG_AVAILABLE, f"no message on {q.name} matches")
        wid = self._next_waiter
        self._next_waiter = wid + 1
        name = q.name
        self.waiters[wid] = Waiter(wid, conn.hconn, h.hobj, md, gmo, buffer_length, name)
        ids = self.queue_waiters.get(name)
        if ids is None:
            self.queue_waiters[name] = [wid]
        else:
            ids.append(wid)
        conn.waiters.add(wid)
        return Waiting(wid, None if wait == C.MQWI_UNLIMITED else self.clock.now() + wait / 1000.0)

    def get_many(self, hconn: int, hobj: int, md: MQMD, gmo: GetOptions, buffer_length: int, limit: int,
                 max_bytes: int, *, frame_bytes: int = 0,
                 framing: int = 0) -> tuple[list[GetResult], Waiting | MQError | None]:
        """Destructive gets for read-ahead: up to ``limit`` messages (and about ``max_bytes``
        of data), each taken exactly as MQGET would take it. The first is an ordinary get
        (every check, and a wait registered when nothing is there); the call cannot change
        between messages, so the rest only search and take.

        ``frame_bytes`` (0: none) is a hard bound besides, for a reply that must fit one
        frame: each message then costs its data, its properties' packed bytes and
        ``framing``, and the run stops before a message that would take it past
        ``frame_bytes`` (the first is taken whatever it costs: the caller bounds it with
        ``buffer_length``).

        Returns the messages and why it stopped: a Waiting (nothing was there), the MQError
        that ended it (PersistentNext, or any MQGET refusal), or None (limit or size reached,
        or no more messages for now).
        """
        if gmo.options & (_BROWSE | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT):
            limit = 1  # cursors and skip-backout marks are per call
        try:
            first = self.get(hconn, hobj, md, gmo, buffer_length)
        except MQError as exc:
            return [], exc
        if isinstance(first, Waiting):
            return [], first
        if first.reason == C.MQRC_TRUNCATED_MSG_FAILED:  # not taken: the same message would come again
            return [first], None
        out = [first]
        conn = self.conn(hconn)
        h = self.handle(conn, hobj)
        size = first.data_length
        head = h.selection is None and _selects_everything(md, gmo)
        room = frame_bytes - _cost(len(first.data), first.properties, framing) if frame_bytes else _UNBOUNDED
        return self._take_run(conn, h, md, gmo, buffer_length, limit, max_bytes, out, size, head, room, framing)

    def _take_run(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions, buffer_length: int, limit: int,
                  max_bytes: int, out: list[GetResult], size: int, head: bool, room: int,
                  framing: int) -> tuple[list[GetResult], MQError | None]:
        """get_many's loop. With ``head`` (the get selects every message) the search is the
        queue's first key; a message that needs one of MQGET's decisions (a browse lock, an
        expiry, properties or an MQRFH2 to re-form, a buffer too short) goes through
        ``attempt``, as every message does without ``head``. ``room``: what is left of the
        frame bound; the next message is looked at before it is taken (one taken outside
        syncpoint cannot be put back if it does not fit)."""
        q = h.queue
        assert q is not None
        messages = q.messages
        order, by_seq = messages.order, messages.by_seq
        opts, qname, now = gmo.options, q.name, self.clock.now()
        skip_persistent = gmo.non_persistent_only
        bounded = room != _UNBOUNDED
        under_cursor = opts & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
        taken = False
        while len(out) < limit and size < max_bytes:
            if head:
                if not order:
                    break
                m = by_seq[order[0][1]]
                if not (m.locked_by or m.properties or m.v6 or m.expires_at is not None
                        or m.data_length > buffer_length):
                    if skip_persistent and m.persistence == C.MQPER_PERSISTENT:
                        return out, PersistentNext(qname)
                    if bounded:
                        room -= m.data_length + framing
                        if room < 0:
                            break
                    self.take(conn, h, q, m, opts, first=True)
                    taken = True
                    # No properties: a handle would be empty (None here, as on the wire).
                    out.append(GetResult(m.md, m.body(buffer_length), m.data_length, m.token, qname, C.MQCC_OK,
                                         C.MQRC_NONE, m.seq, m.queue, None, m.md_bytes()))
                    size += m.data_length
                    continue
            if bounded:
                nxt = h.under_cursor if under_cursor else self.search(q, h, md, gmo, None, self.clock.now())
                if nxt is None or _cost(min(nxt.data_length, buffer_length), nxt.properties, framing) > room:
                    break
            try:
                r = self.attempt(conn, h, md, gmo, buffer_length)
            except MQError as exc:
                return out, exc
            if r is None:
                break
            out.append(r)
            if r.reason == C.MQRC_TRUNCATED_MSG_FAILED:
                break
            size += r.data_length
            if bounded:
                room -= _cost(len(r.data), r.properties, framing)
        if taken:
            q.last_get = now
        return out, None

    def check_get_allowed(self, h: Handle) -> None:
        alias, q = h.alias, h.queue
        if alias is not None and alias.attrs["GET"] == C.MQQA_GET_INHIBITED:
            raise failed(C.MQRC_GET_INHIBITED, f"{alias.name} has GET(DISABLED)")
        if q is not None and q.attrs["GET"] == C.MQQA_GET_INHIBITED:
            raise failed(C.MQRC_GET_INHIBITED, f"{q.name} has GET(DISABLED)")

    def attempt(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions, buffer_length: int) -> GetResult | None:
        """Find and take (or browse) a message now; None when nothing matches."""
        q = h.queue
        assert q is not None
        opts = gmo.options
        now = self.clock.now()
        if opts & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
            msg = h.under_cursor
            if msg is None or q.messages.by_seq.get(msg.seq) is not msg or (msg.locked_by not in (0, h.hobj)):
                raise failed(C.MQRC_NO_MSG_UNDER_CURSOR, f"the browse cursor of {h.name} is on no available message")
            if msg.expired(now):
                self.discard_expired(q, msg)
                raise failed(C.MQRC_NO_MSG_UNDER_CURSOR, "the message under the cursor has expired")
        else:
            after = h.cursor if opts & C.MQGMO_BROWSE_NEXT else None
            msg = self.search(q, h, md, gmo, after, now)
            if msg is None:
                return None
        browse = bool(opts & (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR))
        if gmo.non_persistent_only and msg.persistent and not browse:
            raise PersistentNext(q.name)
        shown = self.delivered(h, msg, gmo)
        handle = gmo.msg_handle
        truncated = (msg.data_length if shown is None else len(shown[1])) > buffer_length
        if browse:
            h.cursor, h.under_cursor = msg.key, msg
        if truncated and not opts & C.MQGMO_ACCEPT_TRUNCATED_MSG:
            # The message stays where it is; a browse cursor now sits on it so the caller can
            # retry with a bigger buffer and MQGMO_(BROWSE_)MSG_UNDER_CURSOR.
            h.under_cursor = msg
            return self.result(h, msg, buffer_length, now, C.MQCC_WARNING, C.MQRC_TRUNCATED_MSG_FAILED, shown,
                               handle)
        # A truncation is the warning a getter must see first; else one from re-forming.
        reason = C.MQRC_TRUNCATED_MSG_ACCEPTED if truncated else (shown[3] if shown is not None else C.MQRC_NONE)
        comp = C.MQCC_WARNING if reason else C.MQCC_OK
        if browse:
            if opts & C.MQGMO_LOCK:
                if h.locked is not None and h.locked is not msg:
                    h.locked.locked_by = 0
                    self.wake(q)
                msg.locked_by, h.locked = h.hobj, msg
            return self.result(h, msg, buffer_length, now, comp, reason, shown, handle)
        self.take(conn, h, q, msg, opts)
        q.last_get = now
        return self.result(h, msg, buffer_length, now, comp, reason, shown, handle)

    def delivered(self, h: Handle, msg: Message, gmo: GetOptions) -> tuple[MQMD, bytes, PropertySet | None, int] | None:
        """The descriptor, data, handle properties and warning reason (0: none) the getter
        receives (propctl.on_get); None when the message is delivered as stored (no
        properties, nothing to re-form: a handle, if any, gets no properties, which
        ``result`` gives it)."""
        if not msg.properties and not msg.v6:
            return None
        definer = h.alias or h.queue
        assert definer is not None
        return propctl.on_get(msg.md, msg.data, msg.properties, msg.v6, int(definer["PROPCTL"]), gmo.options,
                              gmo.msg_handle)

    def search(self, q: QueueObject, h: Handle, md: MQMD, gmo: GetOptions, after: tuple[int, int] | None,
               now: float) -> Message | None:
        mo = gmo.match_options
        want_msg = md.msg_id if mo & C.MQMO_MATCH_MSG_ID and md.msg_id != NONE_ID else None
        want_correl = md.correl_id if mo & C.MQMO_MATCH_CORREL_ID and md.correl_id != NONE_ID else None
        want_group = md.group_id if mo & C.MQMO_MATCH_GROUP_ID and md.group_id != NONE_ID else None
        want_seqno = md.msg_seq_number if mo & C.MQMO_MATCH_MSG_SEQ_NUMBER else None
        want_offset = md.offset if mo & C.MQMO_MATCH_OFFSET else None
        want_token = gmo.msg_token if mo & C.MQMO_MATCH_MSG_TOKEN and gmo.msg_token != bytes(16) else None
        messages = q.messages
        expired: list[Message] = []
        found: Message | None = None
        keys: Iterator[tuple[int, int]]
        view = h.selection  # a selection string: only what it accepts (engine.selection)
        if want_token is not None:
            keys = iter(())
            cand = messages.by_seq.get(int.from_bytes(want_token[:8], "big"))
            if cand is not None and cand.token == want_token and (after is None or cand.key > after):
                keys = iter((cand.key,))
        elif view is not None and want_msg is None and want_correl is None:
            keys, view = view.keys(after), None  # these keys are selected already
        else:
            keys = messages.candidates(want_msg, want_correl, after)
        for key in keys:
            m = messages.get(key)
            if m is None or m.locked_by not in (0, h.hobj):
                continue
            if ((want_msg is not None and m.msg_id != want_msg)
                    or (want_correl is not None and m.correl_id != want_correl)):
                continue
            if want_group is not None or want_seqno is not None or want_offset is not None:
                mmd = m.md
                if ((want_group is not None and mmd.group_id != want_group)
                        or (want_seqno is not None and mmd.msg_seq_number != want_seqno)
                        or (want_offset is not None and mmd.offset != want_offset)):
                    continue
            if view is not None and not view.accepts(m):
                continue
            if m.expired(now):
                expired.append(m)
                continue
            found = m
            break
        for m in expired:
            self.discard_expired(q, m)
        return found

    def take(self, conn: Connection, h: Handle, q: QueueObject, msg: Message, opts: int, first: bool = False,
             queued: bool = True) -> None:
        """Remove a message destructively: into the unit of work, or gone now (``first``:
        it holds the queue's first key; not ``queued``: it is being handed over, and was
        never in the queue's index)."""
        in_uow = bool(opts & C.MQGMO_SYNCPOINT) or bool(opts & C.MQGMO_SYNCPOINT_IF_PERSISTENT and msg.persistent)
        if queued:
            record = msg.fetch()  # its record is about to go: a paged-out message comes back
            q.messages.remove(msg, first)
            msg.restore(record)
        if msg.locked_by:
            holder = self.handles.get(msg.locked_by)
            if holder is not None and holder.locked is msg:
                holder.locked = None
            msg.locked_by = 0
        if h.options & C.MQOO_SAVE_ALL_CONTEXT:
            h.saved_context = msg.md
        if in_uow:
            uow = self.uow_of(conn)
            uow.gets.append((q, msg))
            q.messages.uncommitted += 1
            if msg.record_id:
                self.journal.delete(msg.record_id, uow.txid)
                uow.journaled = True
            if opts & C.MQGMO_MARK_SKIP_BACKOUT:
                uow.marked_skip = msg
            if msg.md.report & C.MQRO_COD:
                self.report_delivery(msg, uow)  # in the same unit: gone again on backout
            return
        if msg.record_id:
            self.journal.delete(msg.record_id)
            msg.record_id = 0
            self.need_sync()
        if msg.md.report & C.MQRO_COD:
            self.report_delivery(msg, None)

    def result(self, h: Handle, msg: Message, buffer_length: int, now: float, comp: int, reason: int,
               shown: tuple[MQMD, bytes, PropertySet | None, int] | None = None, handle: bool = False) -> GetResult:
        """What the getter receives (``shown``: as ``delivered`` re-formed it; ``handle``:
        the getter gave a message handle, which gets the message's properties)."""
        qname = h.queue.name if h.queue else ""
        if shown is None:
            if msg.expires_at is None:
                md, raw = msg.md, msg.md_bytes()
            else:
                md, raw = msg.md.replace(expiry=msg.remaining_expiry(now)), None
            return GetResult(md, msg.body(buffer_length), msg.data_length, msg.token, qname, comp, reason, msg.seq,
                             msg.queue, PropertySet() if handle else None, raw)
        md, data, props, _ = shown
        if msg.expires_at is not None:
            md = md.replace(expiry=msg.remaining_expiry(now))
        return GetResult(md, data[:buffer_length], len(data), msg.token, qname, comp, reason, msg.seq, msg.queue,
                         props)

    def unlock(self, h: Handle) -> GetResult:
        if h.locked is None:
            raise MQError(C.MQCC_WARNING, C.MQRC_NO_MSG_LOCKED, f"{h.name} holds no locked message")
        msg, h.locked = h.locked, None
        msg.locked_by = 0
        assert h.queue is not None
        self.wake(h.queue)
        return GetResult(MQMD(), b"", 0, bytes(16), h.queue.name)

    def discard_expired(self, q: QueueObject, msg: Message) -> None:
        """An expired message met by a search or the expiry scan: removed, never delivered."""
        record = msg.fetch()  # an expiration report may need it after the record is gone
        q.messages.remove(msg)
        msg.restore(record)
        if msg.record_id:
            self.journal.delete(msg.record_id)
            msg.record_id = 0
        for hobj in q.handles:
            h = self.handles.get(hobj)
            if h is not None and h.under_cursor is msg:
                h.under_cursor = None
        if msg.md.report & C.MQRO_EXPIRATION:
            self.report_expiry(msg)
