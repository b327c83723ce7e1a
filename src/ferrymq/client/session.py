"""The client logic both ``Client`` and ``AsyncClient`` run: no I/O here.

``Session`` wraps the sans-IO ``ClientConnection``: it numbers requests, buffers the
bytes to send (so many async puts and credits leave in one write), sorts what arrives
into replies by correlation id, pushed messages by handle and server notices, and turns
failed replies into typed exceptions. The functions below build each request from the
Pythonic arguments and read each reply; the sync and async classes only move bytes.
"""

from __future__ import annotations

import itertools
import os
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ferrymq.client.errors import Truncated, broken, error_for
from ferrymq.client.message import AsyncPutStatus, Message, PutResult
from ferrymq.client.reconnect import OpenRecord
from ferrymq.errors import MQError
from ferrymq.mq import constants as C
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import events as E
from ferrymq.protocol.codec import MAX_BATCH, PACKERS, PROCESS_ID_LIMIT
from ferrymq.protocol.columnframes import PutColumns, largest
from ferrymq.protocol.columnframes import check as check_columns
from ferrymq.protocol.connection import CLOSED, NEED_DATA, ClientConnection, Next
from ferrymq.protocol.errors import LocalProtocolError, RemoteProtocolError
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.wire.mqmd import MQMD
from ferrymq.wire.mqod_names import check_dynamic_q_name, check_od_names

FLUSH_AT = 64 * 1024
"""Buffered request bytes that force a write even when nothing waits for a reply."""
PUT_BATCH_BYTES = 64 * 1024
"""What one PutBatch frame carries at most (the negotiated maximum may be lower)."""
_PUT_ITEM_COST = 28  # an item's MsgId and length in a PutBatch
COLUMN_FRAME_BYTES = 1024 * 1024
"""Payload bytes one PutColumns frame carries at most (the negotiated maximum may be lower):
large enough that the server's work per frame is nothing per message."""

DEFAULT_OPEN = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT | C.MQOO_BROWSE | C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING
OUTPUT_ONLY = C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_FAIL_IF_QUIESCING


_U64 = struct.Struct(">Q").pack
_monotonic = time.monotonic  # a module global: one lookup, not a module's attribute, per read

_IDLE_HEARTBEAT = b"".join(PACKERS[E.Heartbeat](E.Heartbeat(0, reply=True)))
"""The server's heartbeat packet, byte for byte: it is sent alone, after a heartbeat interval
in which the server wrote nothing (or heard nothing), so never inside one of its frames."""

_NOT_REPLIES = frozenset({E.Pushed, E.PushedBatch, E.PersistentNext, E.Heartbeat, E.Ending, type(NEED_DATA)})
"""The frames from the server that answer no request (and next_event's NEED_DATA and CLOSED,
told apart after them: a reply is what is tested first)."""


@dataclass(slots=True)
class ConsumerState:
    """Read-ahead bookkeeping for one handle."""

    corr: int
    window: int
    buffer: deque[tuple[bytes, bytes, int, bytes, E.Properties | None]]  # Message's arguments
    unacked: int = 0  # consumed messages not yet returned as credit
    ended: E.Reply | None = None
    paused: bool = False  # the server stopped before a persistent message (PersistentNext)


class Session:
    """One conversation's client-side state; feed it bytes, take bytes to send."""

    def __init__(self) -> None:
        self.conn = ClientConnection()
        # The next correlation id: the counter's own __next__, not a method around it (a
        # request/reply round trip asks twice).
        self.next_corr: Callable[[], int] = itertools.count(1).__next__
        self.out: list[bytes] = []
        self.out_bytes = 0  # encoded bytes in ``out`` plus what the held batch will take
        # A read-ahead's Credit is in ``out``: it leaves with the next write, which a
        # blocking consumer makes at once (see take_pushed).
        self.credit_due = False
        self._batch: list[E.Put] = []  # asynchronous puts held for one PutBatch frame
        self._batch_bytes = 0
        self._batch_head = self._batch_tail = b""  # the held puts' MQMD around the MsgId
        self._batch_limit = -1  # bytes a PutBatch may carry once connected (0: no batches)
        self.replies: dict[int, Any] = {}
        self.consumers: dict[int, ConsumerState] = {}
        self._consume_corr: dict[int, int] = {}
        self.ending: E.Ending | None = None
        self.eof = False
        self.sent_request = False  # the last request's bytes were all written (see reconnect)
        self.last_rx = time.monotonic()
        # When a request last left: under SHARECNV(0) the server is silent while nothing
        # waits (IBM: heartbeats only during a waiting MQGET), so silence is counted from
        # the later of the two. ``heartbeats_in`` counts the server's heartbeats.
        self.last_tx = self.last_rx
        self.heartbeats_in = 0
        self.qmgr_name = ""
        self.heartbeat_ms = 0
        self.idle_after: float | None = None  # idle_limit(), made when heartbeat_ms is agreed
        self.max_msg_length = 0
        self._salt = int.from_bytes(os.urandom(3), "big") << 40
        self._msg_counter = itertools.count(int(time.time() * 1000) & 0xFFFFFFFFFF)
        self._id_prefix = b"AMQ " + b" " * 12

    # -- sending ---------------------------------------------------------------------------

    def send(self, ev: E.ClientEvent | PutColumns) -> None:
        """Encode a frame into the output buffer.

        Raises:
            ConnectionBroken: the conversation already ended.
        """
        if self.ending is not None or self.eof:
            self.check_alive()
        if type(ev) is E.Put and not ev.reply and ev.properties is None and type(ev.md) is bytes:
            limit = self._batch_limit
            if limit < 0 and self.conn.version:  # fixed from the ConnectReply on
                limit = self._batch_limit = min(PUT_BATCH_BYTES, self.conn.batch_limit())
            if limit > 0:
                if self._batch:
                    self._batch_put(ev, limit)
                else:  # _batch_put's work for a first put (a request/reply loop's lone one), inline
                    cost = len(ev.data) + _PUT_ITEM_COST
                    self._batch.append(ev)
                    self._batch_bytes = cost
                    self.out_bytes += cost
                return
        batch = self._batch
        out = self.out
        try:  # _encode's work, inline: a request/reply loop comes here twice per round trip
            if batch:
                if len(batch) == 1:  # a lone asynchronous put, as a request/reply loop sends: as itself
                    self.out_bytes -= self._batch_bytes
                    self._batch, self._batch_bytes = [], 0
                    data = self.conn.send(batch[0])
                    out.append(data)
                    self.out_bytes += len(data)
                else:
                    self._send_batch()
            data = self.conn.send(ev)
        except LocalProtocolError as exc:
            raise broken(str(exc)) from None
        out.append(data)
        self.out_bytes += len(data)

    def _encode(self, ev: E.ClientEvent | PutColumns) -> None:
        try:
            data = self.conn.send(ev)
        except LocalProtocolError as exc:
            raise broken(str(exc)) from None
        self.out.append(data)
        self.out_bytes += len(data)

    def _batch_put(self, ev: E.Put, limit: int) -> None:
        """Hold an asynchronous put to leave with the ones around it in one PutBatch frame:
        consecutive puts on one handle with the same options and a descriptor that differs
        only in MsgId (what a producer loop sends) share one header and one MQMD."""
        batch = self._batch
        cost = len(ev.data) + _PUT_ITEM_COST
        md = ev.md
        assert isinstance(md, bytes)
        if batch:
            first = batch[0]
            if len(batch) == 1:  # taken when a second put comes: a lone put (request/reply) never needs them
                first_md = first.md
                assert isinstance(first_md, bytes)
                self._batch_head, self._batch_tail = first_md[:48], first_md[72:]
            # startswith/endswith compare in place: no copies of the descriptor per put
            if (ev.hobj != first.hobj or ev.options != first.options or ev.context != first.context
                    or self._batch_bytes + cost > limit or len(batch) >= MAX_BATCH
                    or not md.endswith(self._batch_tail) or not md.startswith(self._batch_head)):
                self._send_batch()
        self._batch.append(ev)
        self._batch_bytes += cost
        self.out_bytes += cost

    def _send_batch(self) -> None:
        batch = self._batch
        self.out_bytes -= self._batch_bytes
        self._batch, self._batch_bytes = [], 0
        if len(batch) == 1:
            self._encode(batch[0])
            return
        first = batch[0]
        items = [(p.md[48:72], p.data) for p in batch]  # type: ignore[index]  # every md is bytes: see send()
        self._encode(E.PutBatch(first.hobj, first.md, items, first.options, first.context))

    def take_with(self, ev: E.ClientEvent) -> bytes:
        """``send(ev)`` then ``take_out()``: what a request's write carries.

        Raises:
            ConnectionBroken: as ``send``.
        """
        batch = self._batch
        if len(batch) == 1 and not self.out and self.ending is None and not self.eof:
            # A request/reply loop's write: its held asynchronous put and the request after it
            # in one pipelined write. Sending an asynchronous put moves no state, so when the
            # machine refuses either (or either fails to encode), the way below sends them
            # again and meets the error as it is.
            try:
                data = self.conn.send_many((batch[0], ev))
            except Exception:
                pass
            else:
                self._batch, self._batch_bytes, self.out_bytes = [], 0, 0
                return data
        self.send(ev)
        return self.take_out()

    def take_out(self, hold: bool = False) -> bytes:
        """The buffered frames to write, the held asynchronous puts encoded last as one
        PutBatch. With ``hold`` (a write the buffer's size forced, not a request), held puts
        below FLUSH_AT stay held when other frames are there to go: they were held because
        the batch before them was full, and leave with the puts after them, not alone."""
        if self._batch and not (hold and self.out and self._batch_bytes < FLUSH_AT):
            self._send_batch()
        data = b"".join(self.out)
        self.out.clear()
        self.out_bytes = self._batch_bytes
        self.credit_due = False
        self.last_tx = time.monotonic()
        return data

    def check_alive(self) -> None:
        if self.ending is not None:
            raise error_for(C.MQCC_FAILED, self.ending.reason, self.ending.detail)
        if self.eof:
            raise broken("the queue manager closed the connection")

    # -- receiving -------------------------------------------------------------------------

    def feed(self, data: bytes | memoryview, filled: bool = False) -> None:
        """Take bytes from the server and sort the frames they complete: replies by
        correlation id, pushed messages to their consumers, heartbeats, an Ending.
        ``filled``: ``data`` (a view of them) were read into the start of the room
        ``conn.packet_room`` gave. One method for both reads, the sorting loop in it: a
        request/reply round trip's reply is received and sorted in one call.

        Raises:
            ConnectionBroken: the server broke the protocol.
        """
        conn = self.conn
        try:
            # A reply alone, as a request/reply loop receives, is taken with nothing buffered:
            # no frame can be torn then, so the test for one is made only on the other way.
            ev: Next | None = None if filled else conn.take_event(data)  # type: ignore[arg-type]  # not filled: bytes
            if ev is None:
                if (data[: len(_IDLE_HEARTBEAT)] == _IDLE_HEARTBEAT) if filled else data.startswith(_IDLE_HEARTBEAT):  # type: ignore[union-attr]
                    self._heartbeat_first()
                if filled:
                    conn.packet_filled(len(data))
                else:
                    conn.receive_data(data)
                ev = conn.next_event()
            self.last_rx = _monotonic()
            while True:
                t = type(ev)
                if t not in _NOT_REPLIES:  # first: what a request/reply loop receives
                    corr = ev.corr  # type: ignore[union-attr]
                    if corr in self._consume_corr:  # a Consume's reply ends its read-ahead
                        self.consumers[self._consume_corr.pop(corr)].ended = ev  # type: ignore[assignment]
                    else:
                        self.replies[corr] = ev
                elif ev is NEED_DATA:
                    return
                elif ev is CLOSED:
                    self.eof = True
                    return
                elif t is E.Pushed:
                    self.consumers[ev.hobj].buffer.append(  # type: ignore[union-attr]
                        (ev.md_bytes, ev.data, ev.data_length, ev.msg_token, ev.properties))  # type: ignore[union-attr]
                elif t is E.PushedBatch:
                    self.consumers[ev.hobj].buffer.extend(ev.items)  # type: ignore[union-attr,arg-type]
                elif t is E.PersistentNext:
                    self.consumers[ev.hobj].paused = True  # type: ignore[union-attr]
                elif t is E.Heartbeat:
                    self.heartbeats_in += 1
                    if ev.reply:  # type: ignore[union-attr]
                        self.send(E.HeartbeatReply(ev.corr))  # type: ignore[union-attr]
                else:  # Ending
                    self.ending = ev  # type: ignore[assignment]
                if conn.drained:  # the next next_event would say NEED_DATA
                    return
                ev = conn.next_event()
        except RemoteProtocolError as exc:
            self.eof = True
            raise broken(f"protocol error from the server: {exc}") from None

    def _heartbeat_first(self) -> None:
        """A read begins with the server's heartbeat packet (before ``last_rx`` is moved):
        inside a frame after a pause, the frame is torn (see ``_torn``). Not a call per read:
        the reader tests the read's first bytes first."""
        now = time.monotonic()
        if self.conn.buffered and self.heartbeat_ms and (now - self.last_rx) * 2000 >= self.heartbeat_ms:
            self._torn(now)

    def _torn(self, now: float) -> None:
        """A heartbeat came, after a pause, where the rest of a frame was due: the frame's
        length was damaged on the way, and read on it would swallow every later heartbeat,
        keeping a dead conversation alive while its caller waited.

        Raises:
            ConnectionBroken: always.
        """
        self.eof = True
        raise broken(f"protocol error from the server: a heartbeat arrived inside a frame after "
                     f"{now - self.last_rx:.1f} s without data ({self.incomplete()}): its length is damaged")

    def incomplete(self) -> str:
        """What is held of a frame begun and not complete, for an error's text ("" if none)."""
        held = self.conn.buffered
        return f"{held} bytes of a frame held, the rest never came" if held else ""

    def idle_limit(self) -> float | None:
        """Seconds of silence after which the server is presumed gone (heartbeats stopped)."""
        return self.idle_after

    # -- read-ahead ------------------------------------------------------------------------

    def start_consume(self, hobj: int, window: int, options: int) -> None:
        window = min(window, E.MAX_WINDOW)  # what a server accepts; credit returns at half of it
        corr = self.next_corr()
        self.send(E.Consume(corr, hobj, window, options))
        self.consumers[hobj] = ConsumerState(corr, window, deque())
        self._consume_corr[corr] = hobj

    def take_pushed(self, hobj: int) -> Message | None:
        """A buffered pushed message, returning credit in batches of half the window.

        The credit must leave at once (``credit_due``), while half the window is still
        buffered: held until the buffer drains, the server would push nothing for a round
        trip per window, and a consumer that keeps up would wait that round trip each time."""
        c = self.consumers[hobj]
        if not c.buffer:
            if c.ended is not None:
                end = c.ended
                del self.consumers[hobj]
                if end.comp == C.MQCC_OK:
                    raise broken("read-ahead ended")
                raise error_for(end.comp, end.reason, end.detail)
            return None
        p = c.buffer.popleft()
        c.unacked += 1
        if c.ended is None and c.unacked * 2 >= c.window:
            self.send(E.Credit(hobj, c.unacked))
            self.credit_due = True
            c.unacked = 0
        return Message(*p)

    def take_pause(self, hobj: int) -> bool:
        """True once when the buffer is drained and the server paused before a persistent
        message: the caller must get the next message with an ordinary Get (after which
        the server resumes pushing)."""
        c = self.consumers[hobj]
        if c.paused and not c.buffer:
            c.paused = False
            return True
        return False

    # -- identifiers -----------------------------------------------------------------------

    def column_limit(self) -> int:
        """Payload bytes one PutColumns frame may carry on this connection."""
        return min(COLUMN_FRAME_BYTES, self.conn.batch_limit())

    def new_msg_id(self) -> bytes:
        """A MsgId for an asynchronous put, in MQ's shape: "AMQ ", the queue manager name, 8 unique bytes."""
        return self._id_prefix + _U64(self._salt | (next(self._msg_counter) & 0xFFFFFFFFFF))

    def connected(self, reply: E.ConnectReply) -> None:
        self.qmgr_name = reply.qmgr_name
        self.heartbeat_ms = reply.heartbeat_ms
        # Worked out once, not per read: a read's wait is bounded by it.
        self.idle_after = None if not reply.heartbeat_ms else reply.heartbeat_ms / 1000 * 2 + 5
        self.max_msg_length = reply.max_msg_length
        self._id_prefix = b"AMQ " + reply.qmgr_name.encode("latin-1", "replace")[:12].ljust(12)


# -- replies --------------------------------------------------------------------------------


USER_ENV, PASSWORD_ENV = "FERRYMQ_USER", "FERRYMQ_PASSWORD"


def hello(qmgr: str, appl_name: str, user: str, password: str | None, max_msg_length: int,
          heartbeat: float, *, local: bool = False, channel: str = "", options: int = 0) -> E.Connect:
    """The CONNECT a client sends: with the user and password (MQCSP) given, or, when neither
    is, over TCP, those of $FERRYMQ_USER and $FERRYMQ_PASSWORD (for scripts and tests: a
    program whose code names no credentials still authenticates). A ``local`` connection
    (the queue manager's local socket) is its OS user unless credentials are given.
    ``channel``: the SVRCONN channel named (blank: the server takes SYSTEM.DEF.SVRCONN).
    ``options``: MQCNO options the queue manager acts on (MQCNO_ACCOUNTING_*). The process
    and the connecting thread are named for accounting messages (ApplicationPid/Tid)."""
    if not user and password is None and not local:
        user, password = os.environ.get(USER_ENV, ""), os.environ.get(PASSWORD_ENV, "")
    return E.Connect(0, qmgr, appl_name, user, max_msg_length=max_msg_length, heartbeat_ms=int(heartbeat * 1000),
                     password=password or "", channel=channel.strip(), options=options,
                     pid=os.getpid() & PROCESS_ID_LIMIT, tid=threading.get_native_id() & PROCESS_ID_LIMIT)


def check(reply: Any) -> Any:
    """The reply, or its failure raised as a typed MQError."""
    if reply.comp == C.MQCC_FAILED or (type(reply) is E.Reply and reply.comp != C.MQCC_OK):
        raise error_for(reply.comp, reply.reason, reply.detail)
    return reply


def get_batch_event(session: Session, hobj: int, *, max_messages: int, max_bytes: int, wait: float | None,
                    syncpoint: bool, read_ahead: int) -> E.GetBatch | None:
    """The GET_BATCH for ``Queue.get_batch``; None when the caller must use ordinary gets
    (a read-ahead handle, whose buffered messages come first)."""
    if (read_ahead and can_read_ahead(None, None, syncpoint)) or session.conn.version < E.BATCH_VERSION:
        return None
    if not 0 < max_messages <= MAX_BATCH:
        raise ValueError(f"max_messages must be 1..{MAX_BATCH}, not {max_messages}")
    opts = C.MQGMO_FAIL_IF_QUIESCING | (C.MQGMO_SYNCPOINT if syncpoint else C.MQGMO_NO_SYNCPOINT)
    ms = wait_ms(wait)
    if ms != 0:
        opts |= C.MQGMO_WAIT
    # The reply must fit one frame: no more than the negotiated maximum (the server caps it too).
    max_bytes = min(max_bytes, session.max_msg_length) if session.max_msg_length else max_bytes
    return E.GetBatch(session.next_corr(), hobj, opts, ms, max_messages, max(1, max_bytes), session.max_msg_length)


def messages_from(reply: Any) -> list[Message]:
    """The messages a GET_BATCH got: none when nothing arrived in time.

    Raises:
        Truncated: the next message is larger than the negotiated maximum (it stays queued).
        MQError: any other refusal.
    """
    if type(reply) is E.GetBatchReply:
        return [Message(*item) for item in reply.items]
    if type(reply) is E.Reply and reply.reason == C.MQRC_NO_MSG_AVAILABLE:
        return []
    return [message_from(reply)]


def message_from(reply: Any) -> Message:
    if type(reply) is E.Reply:
        raise error_for(reply.comp, reply.reason, reply.detail)
    msg = Message(reply.md_bytes, reply.data, reply.data_length, reply.msg_token, reply.properties, reply.reason)
    if reply.reason == C.MQRC_TRUNCATED_MSG_FAILED:
        err = Truncated(reply.comp, reply.reason, reply.detail or f"message of {reply.data_length} bytes")
        err.message = msg
        raise err
    if reply.comp == C.MQCC_FAILED:
        raise error_for(reply.comp, reply.reason, reply.detail)
    return msg


def put_result(reply: Any) -> PutResult:
    check(reply)
    md = reply.md
    return PutResult(md, None, reply.resolved_q_name, reply.resolved_q_mgr_name) if isinstance(md, bytes) \
        else PutResult(b"", md, reply.resolved_q_name, reply.resolved_q_mgr_name)


def stat_result(reply: Any) -> AsyncPutStatus:
    check(reply)
    first = None if reply.first_comp == C.MQCC_OK else error_for(reply.first_comp, reply.first_reason, reply.first_detail)
    return AsyncPutStatus(reply.put_success, reply.put_warning, reply.put_failure, first)


# -- requests -------------------------------------------------------------------------------

PutSpec = tuple[int | None, bool | None, float | None, str, str, str | None, int | None, int, int]
"""A put's descriptor arguments, as one tuple (priority, persistent, expiry, reply_to_q,
reply_to_q_mgr, format, msg_type, report, feedback): ``Queue.put`` hands them on so, because
a call with twenty keyword arguments costs microseconds on the request/reply path."""

Template = tuple[bytes, bytes, bytes, bytes, bytes]
"""A packed MQMD v2 and its pieces around the identifiers: (whole, [:48], [72:], [:72], [96:]).
Cut once, so that a put or get splices its MsgId or CorrelId in with one copy, not three."""


def _cut(tpl: bytes) -> Template:
    return tpl, tpl[:48], tpl[72:], tpl[:72], tpl[96:]


_md_cache: dict[tuple[PutSpec, str, int], Template] = {}


def _template(spec: PutSpec, fmt: str, ccsid: int) -> Template:
    """The packed MQMD v2 for a put's descriptor arguments (Format ``fmt``, not spec's
    ``format``, which may be None), identifiers blank, cut (see Template); cached."""
    key = (spec, fmt, ccsid)
    tpl = _md_cache.get(key)
    if tpl is None:
        priority, persistent, expiry, reply_to_q, reply_to_q_mgr, _, msg_type, report, feedback = spec
        tpl = _cut(pack_md(MQMD(
            version=C.MQMD_VERSION_2,
            priority=C.MQPRI_PRIORITY_AS_Q_DEF if priority is None else priority,
            persistence=C.MQPER_PERSISTENCE_AS_Q_DEF if persistent is None else (
                C.MQPER_PERSISTENT if persistent else C.MQPER_NOT_PERSISTENT),
            expiry=C.MQEI_UNLIMITED if expiry is None else max(1, round(expiry * 10)),
            reply_to_q=reply_to_q, reply_to_q_mgr=reply_to_q_mgr, format=fmt,
            msg_type=(C.MQMT_REQUEST if reply_to_q else C.MQMT_DATAGRAM) if msg_type is None else msg_type,
            report=report, feedback=feedback, coded_char_set_id=ccsid,
        )))
        if len(_md_cache) < 256:
            _md_cache[key] = tpl
    return tpl


def _pack_v2(md: MQMD) -> bytes:
    return pack_md(md.replace(version=C.MQMD_VERSION_2) if md.version != C.MQMD_VERSION_2 else md)


def build_md(*, priority: int | None, persistent: bool | None, expiry: float | None, correl_id: bytes | None,
             msg_id: bytes | None, reply_to_q: str, reply_to_q_mgr: str, format: str, msg_type: int | None,
             report: int, feedback: int, ccsid: int, md: MQMD | None) -> bytes:
    """The packed MQMD v2 for a put; templates are cached and identifiers spliced in."""
    if md is not None:
        return _pack_v2(md)
    spec = (priority, persistent, expiry, reply_to_q, reply_to_q_mgr, format, msg_type, report, feedback)
    return _splice(_template(spec, format, ccsid), msg_id, correl_id)


def _splice(tpl: Template, msg_id: bytes | None, correl_id: bytes | None) -> bytes:
    """``tpl`` (a packed MQMD v2, cut) with MsgId and CorrelId put in (None: as in ``tpl``)."""
    if correl_id is None:
        if msg_id is None:
            return tpl[0]
        if len(msg_id) == 24:  # an asynchronous put's own MsgId
            return tpl[1] + msg_id + tpl[2]
    elif len(correl_id) == 24:
        if msg_id is None:  # a get by CorrelId
            return tpl[3] + correl_id + tpl[4]
        if len(msg_id) == 24:  # a reply: its own MsgId, the request's as CorrelId
            return b"".join((tpl[1], msg_id, correl_id, tpl[4]))
    whole = tpl[0]
    return b"".join((tpl[1], _id(msg_id, whole[48:72]), _id(correl_id, whole[72:96]), tpl[4]))


def _id(value: bytes | None, default: bytes) -> bytes:
    if value is None:
        return default
    if len(value) > 24:
        raise ValueError(f"identifiers are at most 24 bytes, not {len(value)}")
    return value.ljust(24, b"\0")


def as_bytes(data: bytes | bytearray | memoryview | str) -> tuple[bytes, str]:
    """Message data as bytes, and the Format it implies (MQSTR for text)."""
    if isinstance(data, str):
        return data.encode("utf-8"), C.MQFMT_STRING
    return bytes(data), ""


_get_tpl: list[Template] = []  # the MQMD a get sends, but for the identifiers it selects by (made on first use)


def get_md(msg_id: bytes | None, correl_id: bytes | None) -> tuple[bytes, int]:
    """The MQMD and MQMO_* match options for a get selecting by identifiers."""
    if not _get_tpl:
        _get_tpl.append(_cut(build_md(priority=None, persistent=None, expiry=None, correl_id=None, msg_id=None,
                                      reply_to_q="", reply_to_q_mgr="", format="", msg_type=None, report=0,
                                      feedback=0, ccsid=0, md=None)))
    tpl = _get_tpl[0]
    if msg_id is None:
        if correl_id is None:
            return tpl[0], 0
        return _splice(tpl, None, correl_id), C.MQMO_MATCH_CORREL_ID
    match = C.MQMO_MATCH_MSG_ID if correl_id is None else C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID
    return _splice(tpl, msg_id, correl_id), match


def wait_ms(wait: float | None) -> int:
    """A wait in seconds (None = forever) as MQGMO WaitInterval milliseconds."""
    if wait is None:
        return C.MQWI_UNLIMITED
    return max(0, int(wait * 1000))


__all__ = ["MQError", "Session", "check", "message_from", "put_result", "stat_result"]


# A put's and a get's options, combined once: module globals, one lookup each per request,
# not two (the module C, then its attribute).
_PMO_SYNCPOINT = C.MQPMO_FAIL_IF_QUIESCING | C.MQPMO_SYNCPOINT
_PMO_NO_SYNCPOINT = C.MQPMO_FAIL_IF_QUIESCING | C.MQPMO_NO_SYNCPOINT
_PMO_ASYNC_RESPONSE = C.MQPMO_ASYNC_RESPONSE
_FMT_STRING = C.MQFMT_STRING
_GMO_SYNCPOINT = C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_SYNCPOINT
_GMO_NO_SYNCPOINT = C.MQGMO_FAIL_IF_QUIESCING | C.MQGMO_NO_SYNCPOINT
_GMO_WAIT = C.MQGMO_WAIT
_MATCH_CORREL_ID = C.MQMO_MATCH_CORREL_ID


def put_event(session: Session, corr: int, hobj: int | str, data: bytes | bytearray | memoryview | str,
              spec: PutSpec, correl_id: bytes | None, msg_id: bytes | None, properties: dict[str, Any] | None,
              syncpoint: bool, async_put: bool, md: MQMD | None, options: int) -> tuple[E.Put | E.Put1, PutResult | None]:
    """The PUT (or PUT1 when ``hobj`` is a queue name) for ``Queue.put``'s arguments
    (``spec``: its descriptor arguments, see PutSpec; ``md``, when given, replaces them).

    For an asynchronous put the result is known now (the client picks the MsgId).
    """
    if type(data) is bytes:
        raw, implied = data, ""
    else:
        raw, implied = as_bytes(data)
    if len(raw) > session.max_msg_length > 0:
        raise too_long(len(raw), session.max_msg_length)
    if async_put and msg_id is None and (md is None or md.msg_id == bytes(24)):
        msg_id = session.new_msg_id()  # one place makes MsgIds: their uniqueness rests on it
    if md is None:
        fmt = implied if spec[5] is None else spec[5]
        ccsid = 1208 if fmt == _FMT_STRING else 0
        tpl = _md_cache.get((spec, fmt, ccsid)) or _template(spec, fmt, ccsid)  # the cache's hit, inline
        md_bytes = _splice(tpl, msg_id, correl_id)
    else:
        md_bytes = _pack_v2(md)
    opts = options | (_PMO_SYNCPOINT if syncpoint else _PMO_NO_SYNCPOINT)
    if msg_id is None and (md is None or md.msg_id == bytes(24)):
        opts |= C.MQPMO_NEW_MSG_ID
    if async_put:
        opts |= _PMO_ASYNC_RESPONSE
    ev: E.Put | E.Put1
    props = PropertySet.of(properties) if properties else None
    if isinstance(hobj, str):
        od_names(hobj, "", "", 0)
        ev = E.Put1(corr, hobj, md_bytes, raw, opts, properties=props, reply=not async_put)
    else:
        ev = E.Put(corr, hobj, md_bytes, raw, opts, 0, props, not async_put)  # positional: cheaper to bind
    return ev, (PutResult(md_bytes) if async_put else None)


def send_columns(session: Session, uow: Any, hobj: int, offsets: bytes, data: bytes | memoryview, *,
                 md: MQMD | None, msg_ids: bytes | None, correl_ids: bytes | None, syncpoint: bool,
                 options: int) -> PutColumns:
    """Buffer the PUT_COLUMNS for ``Queue.put_columns`` (asynchronous puts: outcomes come
    from Stat) after ``uow`` (the client's UnitOfWorkGuard) has seen it; the caller flushes.

    Raises:
        ValueError: columns that disagree (see columnframes.check) or, for more than one
            message, more data than one frame carries (``Session.column_limit``).
        MQError: MQRC_DATA_LENGTH_ERROR (2010), a payload over the connection's maximum
            message length (see ``too_long``); nothing is sent.
    """
    raw_md = build_md(priority=None, persistent=None, expiry=None, correl_id=None, msg_id=None, reply_to_q="",
                      reply_to_q_mgr="", format="", msg_type=None, report=0, feedback=0, ccsid=0, md=md)
    opts = (options | C.MQPMO_FAIL_IF_QUIESCING | C.MQPMO_ASYNC_RESPONSE
            | (C.MQPMO_SYNCPOINT if syncpoint else C.MQPMO_NO_SYNCPOINT))
    ev = PutColumns(hobj, raw_md, offsets, data, msg_ids, correl_ids, opts)
    check_columns(ev)
    longest = largest(ev)
    if longest > session.max_msg_length > 0:
        raise too_long(longest, session.max_msg_length)
    limit = session.column_limit()
    if len(data) > limit and ev.count > 1:  # one message alone may be as long as the connection allows
        raise ValueError(f"a PutColumns carries at most {limit} bytes of data on this connection, not {len(data)}")
    uow.before(ev)
    session.send(ev)
    return ev


def too_long(length: int, limit: int) -> MQError:
    """What IBM's client answers, before sending anything, to an MQPUT, MQPUT1 or MQGET
    whose buffer is longer than the maximum message length negotiated for the channel:
    MQRC_DATA_LENGTH_ERROR (2010). The connection stays as it was (not 2009: pymqi programs
    take that for "reconnect")."""
    return error_for(C.MQCC_FAILED, C.MQRC_DATA_LENGTH_ERROR,
                     f"{length} bytes exceed the connection's negotiated maximum message length {limit}")


def od_names(name: str, q_mgr_name: str, alternate_user_id: str, options: int) -> None:
    """``check_od_names`` with the client's typed errors: an MQOD name longer than IBM's
    field is refused here with the reason the queue manager gives (its frame might not
    even carry it)."""
    try:
        check_od_names(name, q_mgr_name, alternate_user_id, options)
    except MQError as exc:
        raise error_for(exc.comp, exc.reason, exc.detail) from None


def dynamic_q_name(pattern: str) -> None:
    """``check_dynamic_q_name`` with the client's typed errors."""
    try:
        check_dynamic_q_name(pattern)
    except MQError as exc:
        raise error_for(exc.comp, exc.reason, exc.detail) from None


def check_qmgr_name(name: str) -> None:
    """MQCONN's QMgrName against IBM's field (MQCHAR48): a longer name is no queue
    manager's, refused before dialing with the queue manager's reason.

    Raises:
        MQError: MQRC_Q_MGR_NAME_ERROR (2058) over MQ_Q_MGR_NAME_LENGTH characters.
    """
    if len(name) > C.MQ_Q_MGR_NAME_LENGTH and len(name.rstrip()) > C.MQ_Q_MGR_NAME_LENGTH:
        raise error_for(C.MQCC_FAILED, C.MQRC_Q_MGR_NAME_ERROR, f"QMgrName is {len(name.rstrip())} characters; "
                        f"MQ_Q_MGR_NAME_LENGTH is {C.MQ_Q_MGR_NAME_LENGTH}")


def check_length(session: Session, length: int) -> None:
    """Raises ``too_long``'s MQError when ``length`` is over the connection's maximum."""
    if length > session.max_msg_length > 0:
        raise too_long(length, session.max_msg_length)


def buffer_length(session: Session, max_length: int | None) -> int:
    """An MQGET's BufferLength: ``max_length``, or the connection's maximum when not given.

    Raises:
        MQError: MQRC_DATA_LENGTH_ERROR (2010) for a buffer over that maximum (``too_long``).
    """
    limit = session.max_msg_length
    if not max_length:
        return limit
    if max_length > limit > 0:
        raise too_long(max_length, limit)
    return max_length


_NO_TOKEN = bytes(16)


def get_event(corr: int, hobj: int, wait: float | None, msg_id: bytes | None, correl_id: bytes | None,
              syncpoint: bool, max_length: int, accept_truncated: bool, browse: int = 0,
              options: int = 0) -> E.Get:
    if msg_id is None and _get_tpl:  # get_md's work for a request/reply loop's gets, inline
        tpl = _get_tpl[0]
        if correl_id is None:
            md, match = tpl[0], 0
        elif len(correl_id) == 24:
            md, match = tpl[3] + correl_id + tpl[4], _MATCH_CORREL_ID
        else:
            md, match = get_md(msg_id, correl_id)
    else:
        md, match = get_md(msg_id, correl_id)
    if browse:
        opts = options | browse | C.MQGMO_FAIL_IF_QUIESCING
    else:
        opts = options | (_GMO_SYNCPOINT if syncpoint else _GMO_NO_SYNCPOINT)
    if wait is None:  # wait_ms(), inline on the hot path (and without max(): a call less)
        ms = C.MQWI_UNLIMITED
    else:
        ms = int(wait * 1000)
        if ms < 0:
            ms = 0
    if ms != 0:
        opts |= _GMO_WAIT
    if accept_truncated:
        opts |= C.MQGMO_ACCEPT_TRUNCATED_MSG
    return E.Get(corr, hobj, md, opts, ms, match, max_length, _NO_TOKEN, True)  # positional: cheaper to bind


def converting(ev: E.Get, ccsid: int | None, encoding: int) -> E.Get:
    """``ev`` asking for MQGMO_CONVERT to ``ccsid`` (MQCCSI_Q_MGR: the queue manager's) and
    ``encoding`` (None: as it is, no conversion)."""
    if ccsid is None:
        return ev
    md = ev.md if isinstance(ev.md, MQMD) else MQMD.decode(ev.md)
    ev.md = md.replace(coded_char_set_id=ccsid, encoding=encoding)
    ev.options |= C.MQGMO_CONVERT
    return ev


class BrowsePosition:
    """Where a browse has got to, so that it resumes after a reconnect: the server's cursor
    is lost with the connection, so the browse starts again from the front and skips the
    messages (by MsgToken, unique on a queue) it has already returned."""

    __slots__ = ("restarted", "tokens")

    def __init__(self) -> None:
        self.tokens: set[bytes] = set()
        self.restarted = False

    def first_time(self, msg: Message) -> bool:
        token = msg.msg_token
        if self.restarted and token in self.tokens:
            return False
        self.tokens.add(token)
        return True


def open_event(corr: int, record: OpenRecord, object_type: int | None = None, alternate_user_id: str = "") -> E.Open:
    """The Open frame for a record (of its object type unless ``object_type`` is given).

    Raises:
        MQError: a name longer than IBM's MQOD field, with the queue manager's reason
            (ferrymq.wire.mqod_names); MQRC_SELECTION_STRING_ERROR for a selection string longer than
            MQ_SELECTOR_LENGTH bytes, which the queue manager would refuse too (checked
            here because the frame could not carry a much longer one).
    """
    od_names(record.name, record.object_q_mgr_name, alternate_user_id, record.options)
    if len(record.dynamic_q_name) > 0x3FFF and len(record.dynamic_q_name.encode("utf-8")) > 0xFFFF:
        dynamic_q_name(record.dynamic_q_name)  # longer than a frame carries: certain to fail, and here
    size = len(record.selection_string.encode("utf-8"))
    if size > C.MQ_SELECTOR_LENGTH:
        raise error_for(C.MQCC_FAILED, C.MQRC_SELECTION_STRING_ERROR,
                        f"the selection string is {size} bytes; MQ_SELECTOR_LENGTH is {C.MQ_SELECTOR_LENGTH}")
    topic_string(record.object_string)
    return E.Open(corr, record.name, record.options, record.object_type if object_type is None else object_type,
                  record.object_q_mgr_name, record.dynamic_q_name, alternate_user_id, record.selection_string,
                  record.object_string)


def topic_string(value: str, reason: int = C.MQRC_TOPIC_STRING_ERROR) -> None:
    """An MQOD or MQSD ObjectString against MQ_TOPIC_STR_LENGTH: a longer one is refused
    here with ``reason`` (the frame would not carry it).

    Raises:
        MQError: ``reason`` (MQRC_TOPIC_STRING_ERROR by default) over 10240 characters.
    """
    if len(value) > C.MQ_TOPIC_STR_LENGTH:
        raise error_for(C.MQCC_FAILED, reason, f"the string is {len(value)} characters; "
                        f"the limit is {C.MQ_TOPIC_STR_LENGTH} (MQ_TOPIC_STR_LENGTH)")


def can_read_ahead(msg_id: bytes | None, correl_id: bytes | None, syncpoint: bool) -> bool:
    """Read-ahead serves plain gets only: no selection, outside syncpoint (as in IBM MQ)."""
    return msg_id is None and correl_id is None and not syncpoint
