"""MQGET and browse: the checks of a get, search, take, the answer, expiry met on the way.

Every refusal raises before anything changes. Search order is the queue's key order
(priority then sequence, or sequence alone on FIFO queues); an expired message met by a
search is discarded then and there, as IBM MQ does, and never returned. A get that finds
nothing and may wait is registered with the waits (engine.waits), which answer it with
``attempt`` when a message comes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ferrymq.engine import conversion, propctl, validate
from ferrymq.engine.api import GetOptions, GetResult, PersistentNext, Waiting
from ferrymq.engine.message import Message, token_of
from ferrymq.engine.monitoring import Monitor
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.reports import Reports
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import EngineState
from ferrymq.engine.units import Units
from ferrymq.engine.waits import Waits
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.wire.mqmd import MQMD, NONE_ID

_BROWSE = C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR
_CURSOR = C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR

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
_PERSISTENT = C.MQPER_PERSISTENT
_SYNCPOINT, _SYNCPOINT_IF_PERSISTENT = C.MQGMO_SYNCPOINT, C.MQGMO_SYNCPOINT_IF_PERSISTENT
_SAVE_ALL_CONTEXT, _COD = C.MQOO_SAVE_ALL_CONTEXT, C.MQRO_COD


def _cost(data: int, properties: PropertySet | None, framing: int) -> int:
    """What a message adds to a reply frame (``get_many``'s hard bound)."""
    return data + framing + (len(props_model.pack(properties)) if properties else 0)


class Getter:
    """MQGET for one queue manager (see the module docstring)."""

    monitor: Monitor  # statistics and accounting (engine.monitoring), bound at composition

    def __init__(self, state: EngineState, waits: Waits, reports: Reports, units: Units) -> None:
        self.state = state
        self.connections, self.handles, self.objects, self.clock = (state.connections, state.handles, state.objects,
                                                                    state.clock)
        self.journal, self.staging = state.journal, state.staging
        self.removed: Callable[[QueueObject], None] = lambda q: None  # bound at composition (engine.events)
        self.waits = waits
        self.wake = waits.wake
        self.report_delivery, self.report_expiry = reports.report_delivery, reports.report_expiry
        self.join_get = units.join_get
        waits.serve_with(self.attempt, self.check_get_allowed)

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
        state = self.state
        conn = state.conn(hconn)
        h = state.handle(conn, hobj)
        validate.get_options(opts, gmo.wait_interval, gmo.match_options, buffer_length)
        if opts & propctl.PROPERTY_OPTIONS:
            propctl.check_get(opts, gmo.msg_handle)
        browse = bool(opts & (_BROWSE | C.MQGMO_UNLOCK))
        if h.queue is None:
            if h.topic is not None or h.subscription is not None:  # IBM: the handle is not a queue's
                raise failed(C.MQRC_HOBJ_ERROR, f"{h.name} is a topic or subscription handle, not a queue's")
            raise failed(C.MQRC_NOT_OPEN_FOR_INPUT, "the queue manager object has no messages")
        if browse and not h.options & C.MQOO_BROWSE:
            raise failed(C.MQRC_NOT_OPEN_FOR_BROWSE, f"{h.name} was not opened with MQOO_BROWSE")
        if not browse and not h.input_mode:
            raise failed(C.MQRC_NOT_OPEN_FOR_INPUT, f"{h.name} was not opened for input")
        if state.quiescing:
            state.check_quiescing(opts, C.MQGMO_FAIL_IF_QUIESCING)
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
        if not opts & C.MQGMO_WAIT or gmo.wait_interval == 0:
            raise failed(C.MQRC_NO_MSG_AVAILABLE, f"no message on {q.name} matches")
        return self.waits.register(conn, h, md, gmo, buffer_length, q.name)

    def get_many(self, hconn: int, hobj: int, md: MQMD, gmo: GetOptions, buffer_length: int, limit: int,
                 max_bytes: int, *, frame_bytes: int = 0, framing: int = 0,
                 ahead: bool = False, streamed: bool = False) -> tuple[list[GetResult], Waiting | MQError | None]:
        """Destructive gets for read-ahead: up to ``limit`` messages (and about ``max_bytes``
        of data), each taken exactly as MQGET would take it. The first is an ordinary get
        (every check, and a wait registered when nothing is there); the call cannot change
        between messages, so the rest only search and take.

        ``frame_bytes`` (0: none) is a hard bound besides, for a reply that must fit one
        frame: each message then costs its data, its properties' packed bytes and
        ``framing``, and the run stops before a message that would take it past
        ``frame_bytes`` (the first is taken whatever it costs: the caller bounds it with
        ``buffer_length``).

        ``ahead`` (a GET_AHEAD, under syncpoint): the messages after the first are read
        ahead (Units.join_get), and the run stops before one whose delivery the queue
        manager must decide (an expiry, a confirmation of delivery, properties to re-form,
        a lock, a buffer too short) and on a handle that saves the context of its gets.

        ``streamed`` (a read-ahead, whose driver sends each message as it comes): a wait
        outside syncpoint may be answered with up to ``limit`` messages, about ``max_bytes``
        of data, handed over to it one by one (Delivery.waiting says it goes on).

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
            if streamed and limit > 1 and not gmo.options & (_SYNCPOINT | _SYNCPOINT_IF_PERSISTENT):
                # The wait takes the rest of the run too, as messages are handed over to it
                # (engine.handover): one wait for many messages, not one per message.
                w = self.waits.waiters[first.waiter_id]
                w.limit, w.room = limit, max_bytes
            return [], first
        if first.reason == C.MQRC_TRUNCATED_MSG_FAILED:  # not taken: the same message would come again
            return [first], None
        out = [first]
        conn = self.state.conn(hconn)
        h = self.state.handle(conn, hobj)
        size = first.data_length
        # A conversion is one of MQGET's decisions: each message goes through ``attempt``.
        head = h.selection is None and not gmo.options & C.MQGMO_CONVERT and _selects_everything(md, gmo)
        room = frame_bytes - _cost(len(first.data), first.properties, framing) if frame_bytes else _UNBOUNDED
        if ahead and not (head and gmo.options & C.MQGMO_SYNCPOINT and not h.options & C.MQOO_SAVE_ALL_CONTEXT):
            return out, None
        return self._take_run(conn, h, md, gmo, buffer_length, limit, max_bytes, out, size, head, room, framing, ahead)

    def _take_run(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions, buffer_length: int, limit: int,
                  max_bytes: int, out: list[GetResult], size: int, head: bool, room: int,
                  framing: int, ahead: bool = False) -> tuple[list[GetResult], MQError | None]:
        """get_many's loop. With ``head`` (the get selects every message) the search is the
        queue's first key; a message that needs one of MQGET's decisions (a browse lock, an
        expiry, properties or an MQRFH2 to re-form, a buffer too short) goes through
        ``attempt``, as every message does without ``head``. Properties a getter's handle
        takes as they are (propctl.in_handle_as_stored: a publication's copies read with a
        handle) need no decision. ``room``: what is left of the
        frame bound; the next message is looked at before it is taken (one taken outside
        syncpoint cannot be put back if it does not fit)."""
        q = h.queue
        assert q is not None
        messages = q.messages
        first_message = messages.head
        opts, qname, now = gmo.options, q.name, self.clock.now()
        skip_persistent = gmo.non_persistent_only
        definer = h.alias or q
        props_as_stored = head and propctl.in_handle_as_stored(int(definer["PROPCTL"]), opts, gmo.msg_handle)
        bounded = room != _UNBOUNDED
        under_cursor = opts & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
        taken = False
        while len(out) < limit and size < max_bytes:
            if head:
                m = first_message()
                if m is None:
                    break
                props = m.properties
                length = m.data_length
                if not (m.locked_by or (not props_as_stored and props) or m.v6 or m.expires_at is not None
                        or length > buffer_length):
                    if skip_persistent and m.persistence == C.MQPER_PERSISTENT:
                        return out, PersistentNext(qname)
                    if ahead and m.report & C.MQRO_COD:
                        break  # its report is put in the unit at the get: a return could not undo it
                    if bounded:
                        room -= _cost(length, props, framing)
                        if room < 0:
                            break
                    self.take(conn, h, q, m, opts, first=True, ahead=ahead)
                    taken = True
                    md, raw = m.md_packed()
                    # No properties: a handle would be empty (None here, as on the wire).
                    out.append(GetResult(md, m.data, length, token_of(m.seq), qname, C.MQCC_OK, C.MQRC_NONE, m.seq,
                                         m.queue, props.copy() if props else None, raw))
                    size += length
                    continue
            if ahead:
                break  # a get read ahead is only one the head of the queue gives as stored
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
        if opts & C.MQGMO_CONVERT:
            shown, buffer_length, reason = self.converted(md, msg, shown, buffer_length, opts, reason, handle)
        comp = C.MQCC_WARNING if reason else C.MQCC_OK
        if browse:
            if opts & C.MQGMO_LOCK:
                if h.locked is not None and h.locked is not msg:
                    h.locked.locked_by = 0
                    self.wake(q)
                msg.locked_by, h.locked = h.hobj, msg
            if self.monitor.on:
                self.monitor.got(conn, q, msg.persistent, msg.data_length, msg.put_at, True)
            return self.result(h, msg, buffer_length, now, comp, reason, shown, handle)
        self.take(conn, h, q, msg, opts)
        q.last_get = now
        return self.result(h, msg, buffer_length, now, comp, reason, shown, handle)

    def converted(self, want: MQMD, msg: Message, shown: tuple[MQMD, bytes, PropertySet | None, int] | None,
                  buffer_length: int, opts: int, reason: int,
                  handle: bool) -> tuple[tuple[MQMD, bytes, PropertySet | None, int] | None, int, int]:
        """MQGMO_CONVERT (engine.conversion) on what ``delivered`` made: the message shown,
        the bytes of it to return and the reason; as they were when nothing is converted. A
        conversion's warning comes before a truncation's (DataLength tells of that)."""
        md, data, props = (msg.md, msg.data, PropertySet() if handle else None) if shown is None else shown[:3]
        conv = conversion.on_get(want, md, data, buffer_length, bool(opts & C.MQGMO_ACCEPT_TRUNCATED_MSG),
                                 int(self.state.qmgr_attr("CCSID")))
        if conv is None:
            return shown, buffer_length, reason
        # The converted message decides truncation; a property's warning comes last.
        reason = conv.reason or (shown[3] if shown is not None else C.MQRC_NONE)
        return (conv.md, conv.data, props, reason), conv.returned, reason

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
             queued: bool = True, ahead: bool = False) -> None:
        """Remove a message destructively: into the unit of work, or gone now (``first``:
        it holds the queue's first key; not ``queued``: it is being handed over, and was
        never in the queue's index; ``ahead``: read ahead, see Units.join_get)."""
        in_uow = bool(opts & _SYNCPOINT or (opts & _SYNCPOINT_IF_PERSISTENT and msg.persistence == _PERSISTENT))
        if queued:
            record = msg.fetch()  # its record is about to go: a paged-out message comes back
            q.messages.remove(msg, first)
            if record is not None:
                msg.restore(record)
        if msg.locked_by:
            holder = self.handles.get(msg.locked_by)
            if holder is not None and holder.locked is msg:
                holder.locked = None
            msg.locked_by = 0
        if h.options & _SAVE_ALL_CONTEXT:
            h.saved_context = msg.md
        q.dequeued += 1
        if q.events_on or q.events_epoch != self.objects.epoch:
            self.removed(q)  # engine.events: depth events
        if self.monitor.on:
            self.monitor.got(conn, q, msg.persistence == _PERSISTENT, msg.data_length, msg.put_at, False)
        if in_uow:
            uow = self.join_get(conn, q, msg, ahead)
            if opts & C.MQGMO_MARK_SKIP_BACKOUT:
                uow.marked_skip = msg
            if msg.report & C.MQRO_COD:
                self.report_delivery(msg, uow)  # in the same unit: gone again on backout
            return
        if msg.record_id:
            self.staging.drop_message(msg)
            msg.record_id = 0
            self.staging.need_sync()
        if msg.report & _COD:
            self.report_delivery(msg, None)

    def result(self, h: Handle, msg: Message, buffer_length: int, now: float, comp: int, reason: int,
               shown: tuple[MQMD, bytes, PropertySet | None, int] | None = None, handle: bool = False) -> GetResult:
        """What the getter receives (``shown``: as ``delivered`` re-formed it; ``handle``:
        the getter gave a message handle, which gets the message's properties)."""
        qname = h.queue.name if h.queue else ""
        if shown is None:
            if msg.expires_at is None:
                md, raw = msg.md_packed()
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
        if self.monitor.on:
            self.monitor.expired(q)
        msg.restore(record)
        if msg.record_id:
            self.staging.drop_message(msg)
            msg.record_id = 0
        for hobj in q.handles:
            h = self.handles.get(hobj)
            if h is not None and h.under_cursor is msg:
                h.under_cursor = None
        if msg.md.report & C.MQRO_EXPIRATION:
            self.report_expiry(msg)
