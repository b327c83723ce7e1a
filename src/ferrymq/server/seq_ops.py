"""Server side of sequence-range access and prepared units of work (seqframes 1150..1169).

Each request calls the engine (sequence_access, xa) and answers after the journal has
what it changed. The sequence calls need a handle this connection opened on the queue, as
the MQI calls they stand for do (``sequence_access.require_open``). An MQError becomes a
REPLY through ops.handle like every other call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ferrymq.engine import sequence_access as S
from ferrymq.engine.message import data_column, md_column
from ferrymq.properties import model as props_model
from ferrymq.properties.model import PropertySet
from ferrymq.protocol import seqframes as F

if TYPE_CHECKING:
    from ferrymq.engine.message import Message
    from ferrymq.server.handler import ClientHandler


# Framing per browsed message besides its data (entry head, MQMD, typical properties);
# the frame limit leaves FRAME_OVERHEAD slack for larger property sets.
_ENTRY_OVERHEAD = 1024
# A columnar page's bytes per message besides data and properties: seq, put time, MQMD,
# and an offset into each blob.
_COLUMN_OVERHEAD = 8 + 8 + F.MD_SIZE + 4 + 4


def _reply(h: ClientHandler, ev: Any, *, vectored: bool = False) -> None:
    h.emit_after(h.qmgr.take_sync_lsn(), ev, vectored=vectored)


def _range(h: ClientHandler, ev: F.SeqRange) -> None:
    S.require_open(h.qmgr, h.hconn, ev.queue, S.NEED_INQUIRE)
    r = S.queue_range(h.qmgr, ev.queue)
    _reply(h, F.SeqRangeReply(ev.corr, r.queue, r.first_seq, r.last_seq, r.depth))


def _browsed(h: ClientHandler, ev: F.BrowseRange, overhead: int) -> tuple[list[Message], int]:
    """The messages a browse request gets, and the byte limit its reply must keep to."""
    S.require_open(h.qmgr, h.hconn, ev.queue, S.NEED_BROWSE)
    # The reply frame must fit the negotiated maximum: cap the bytes at it.
    limit = h.conn.max_msg_length if ev.max_bytes == 0 else min(ev.max_bytes, h.conn.max_msg_length)
    max_msgs = min(ev.max_msgs or F.MAX_BROWSE, F.MAX_BROWSE)
    return S.browse_range(h.qmgr, ev.queue, ev.from_seq, ev.to_seq, max_msgs, limit, overhead=overhead), limit


def _browse(h: ClientHandler, ev: F.BrowseRange) -> None:
    msgs, _ = _browsed(h, ev, _ENTRY_OVERHEAD)
    entries = [F.RangeEntry(m.seq, m.put_at, m.md.pack(), m.properties or PropertySet(), m.body(m.data_length))
               for m in msgs]
    _reply(h, F.BrowseRangeReply(ev.corr, entries))


def columns_reply(corr: int, msgs: list[Message], limit: int) -> F.BrowseColumnsReply:
    """``msgs`` as one BROWSE_COLUMNS_REPLY of at most ``limit`` bytes (at least one message).

    Built from what each message already holds (its stored MQMD bytes, its data) with one
    pass per column; properties are packed only for the messages that have any, and the
    page is cut where their bytes would overflow ``limit`` (the engine sized it without them).
    """
    packed: list[bytes] | None = None
    props: dict[int, PropertySet] = {}
    found = [m.properties for m in msgs]
    if found.count(None) != len(found):
        props = {i: p for i, p in enumerate(found) if p}
    if props:
        packed = [b""] * len(msgs)
        for i, p in props.items():
            packed[i] = props_model.pack(p)
        size = 4
        for i, m in enumerate(msgs):
            size += m.data_length + _COLUMN_OVERHEAD + len(packed[i])
            if size > limit and i:
                msgs, packed = msgs[:i], packed[:i]
                props = {k: v for k, v in props.items() if k < i}
                break
    bodies = data_column(msgs)
    return F.BrowseColumnsReply(
        corr, len(msgs), F.pack_le("q", [m.seq for m in msgs]), F.pack_le("d", [m.put_at for m in msgs]),
        md_column(msgs), props, F.column_offsets(list(map(len, bodies))),
        packed_properties=packed, data_parts=bodies)


def _browse_columns(h: ClientHandler, ev: F.BrowseColumns) -> None:
    msgs, limit = _browsed(h, ev, _COLUMN_OVERHEAD)
    # Megabytes of message data: written as the messages hold it, never copied into one buffer.
    _reply(h, columns_reply(ev.corr, msgs, limit), vectored=True)


def _remove(h: ClientHandler, ev: F.RemoveUpto) -> None:
    S.require_open(h.qmgr, h.hconn, ev.queue, S.NEED_INPUT)
    removed = S.remove_upto(h.qmgr, ev.queue, ev.upto_seq, ev.reader)
    _reply(h, F.RemoveUptoReply(ev.corr, removed))


def _readers(h: ClientHandler, ev: F.Readers) -> None:
    S.require_open(h.qmgr, h.hconn, ev.queue, S.NEED_INQUIRE)
    _reply(h, F.ReadersReply(ev.corr, S.reader_positions(h.qmgr, ev.queue)))


def _prepare(h: ClientHandler, ev: F.Prepare) -> None:
    n = h.qmgr.prepare(h.hconn, ev.xid)
    _reply(h, F.PrepareReply(ev.corr, n))


def _resolve(h: ClientHandler, ev: F.Resolve) -> None:
    found = h.qmgr.resolve(h.hconn, ev.xid, ev.commit)
    _reply(h, F.ResolveReply(ev.corr, found))
    h.server.after_engine_call(h)  # committed puts may satisfy waiting gets elsewhere


def _in_doubt(h: ClientHandler, ev: F.InDoubt) -> None:
    _reply(h, F.InDoubtReply(ev.corr, sorted(h.qmgr.in_doubt)))


OPS: dict[type, Callable[[Any, Any], None]] = {
    F.SeqRange: _range,
    F.BrowseRange: _browse,
    F.BrowseColumns: _browse_columns,
    F.RemoveUpto: _remove,
    F.Readers: _readers,
    F.Prepare: _prepare,
    F.Resolve: _resolve,
    F.InDoubt: _in_doubt,
}
