"""Queue access by sequence number, for replayable readers such as the Spark connector.

A queue's messages carry the per-queue sequence numbers given at put time. A replayable
reader asks for a queue's range (``queue_range``), browses ``[from, to)`` without
removing anything (``browse_range``) as often as it needs, and once its consumer has
made the result durable removes everything up to a sequence (``remove_upto``). Removal
is idempotent and records the reader's acknowledged position, journaled, so its lag is
visible to operators and survives a restart.

Over the wire (server.seq_ops) each call needs what the MQI call it stands for needs: the
connection must hold a handle on the queue opened for it (``require_open``): input to
remove, browse to browse, inquire (or browse, or input) to read the range and the
readers. Otherwise IBM's reason for that call on such a handle (2037, 2036, 2038) and
nothing changes. Calls made in-process by the queue manager itself are not checked.

Sequence numbers are handed out at put time, so a put still inside a unit of work may
hold a lower number than a committed one. The range's ``last_seq`` therefore stops just
below the lowest sequence still in flight: a reader that stays at or below it can never
skip (or remove) a message that becomes visible later.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, islice, repeat
from operator import add, itemgetter
from typing import Protocol

from ferrymq.engine import propctl
from ferrymq.engine.api import Clock
from ferrymq.engine.message import Message, data_lengths
from ferrymq.engine.objects import ObjectRegistry, QueueObject
from ferrymq.engine.session import Connection, Handle, ReaderPosition, UnitOfWork
from ferrymq.engine.staging import Staging
from ferrymq.errors import failed
from ferrymq.mq import constants as C
from ferrymq.store.journal import Journal, Record

log = logging.getLogger("ferrymq.engine")

KIND_READER = 5  # journal record kind: one reader's acknowledged position on one queue
MAX_READER_NAME = 256
_SEQ_OF_KEY = itemgetter(1)


@dataclass(frozen=True, slots=True)
class QueueRange:
    """What a replayable reader may plan with: ``[first_seq, last_seq]`` and the depth.

    ``first_seq`` is the lowest visible sequence (``last_seq + 1`` when none is visible).
    """

    queue: str
    first_seq: int
    last_seq: int
    depth: int


class Engine(Protocol):
    """What sequence access needs of a queue manager (engine.qmgr.QueueManager has it)."""

    objects: ObjectRegistry
    connections: dict[int, Connection]
    handles: dict[int, Handle]
    in_doubt: dict[bytes, UnitOfWork]
    readers: dict[tuple[str, str], ReaderPosition]
    clock: Clock
    journal: Journal
    staging: Staging

    def write_record(self, record_id: int, kind: int, payload: bytes) -> int: ...

    def need_sync(self) -> None: ...


_INPUT = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE


@dataclass(frozen=True, slots=True)
class Need:
    """What a sequence call needs of a handle: any of ``options``, else ``reason``."""

    options: int
    reason: int
    what: str


NEED_INQUIRE = Need(C.MQOO_INQUIRE | C.MQOO_BROWSE | _INPUT, C.MQRC_NOT_OPEN_FOR_INQUIRE, "inquire")
NEED_BROWSE = Need(C.MQOO_BROWSE, C.MQRC_NOT_OPEN_FOR_BROWSE, "browse")
NEED_INPUT = Need(_INPUT, C.MQRC_NOT_OPEN_FOR_INPUT, "input")


def require_open(qm: Engine, hconn: int, name: str, need: Need) -> None:
    """Refuse a sequence call on ``name`` unless connection ``hconn`` holds a handle on
    that queue (through any alias of it) opened with one of ``need.options``.

    Raises:
        MQError: what ``local_queue`` raises; ``need.reason`` when no handle qualifies.
    """
    q = local_queue(qm, name)
    conn = qm.connections.get(hconn)
    if conn is not None:
        for h in conn.handles.values():
            if h.queue is q and not h.deleted and h.options & need.options:
                return
    raise failed(need.reason, f"queue {q.name!r} is not open for {need.what} on this connection: "
                              f"open it (MQOPEN) before this call")


def local_queue(qm: Engine, name: str) -> QueueObject:
    """The local queue ``name`` (an alias resolves to its target).

    Raises:
        MQError: MQRC_UNKNOWN_OBJECT_NAME when no such queue exists, MQRC_OBJECT_TYPE_ERROR
            when it does not hold messages (remote queue, model, ...).
    """
    q = qm.objects.find(name.strip())
    if q is None:
        raise failed(C.MQRC_UNKNOWN_OBJECT_NAME, f"queue {name!r} is not defined")
    if not q.is_local:
        target = str(q.attrs.get("TARGET", "") or "")
        q = qm.objects.find(target) if target else None
        if q is None or not q.is_local:
            raise failed(C.MQRC_OBJECT_TYPE_ERROR, f"queue {name!r} holds no messages (not a local queue)")
    return q


def in_flight_low(qm: Engine, q: QueueObject) -> int | None:
    """The lowest sequence of a put to ``q`` not yet committed (open or prepared units)."""
    low: int | None = None
    uows = [c.uow for c in qm.connections.values() if c.uow is not None] + list(qm.in_doubt.values())
    for uow in uows:
        for pq, msg in uow.puts:
            if pq is q and (low is None or msg.seq < low):
                low = msg.seq
    return low


def _stable_last(qm: Engine, q: QueueObject) -> int:
    last = q.next_seq - 1
    low = in_flight_low(qm, q)
    return last if low is None else min(last, low - 1)


def queue_range(qm: Engine, name: str) -> QueueRange:
    """The queue's stable sequence range and depth (see the module docstring)."""
    q = local_queue(qm, name)
    last = _stable_last(qm, q)
    first = q.messages.first_seq()
    return QueueRange(q.name, last + 1 if first is None else min(first, last + 1), last, q.messages.depth)


def _in_range(q: QueueObject, from_seq: int, to_seq: int) -> Iterator[Message]:
    """The committed messages with ``from_seq <= seq < to_seq`` in sequence order, lazily
    (a browse stops at its page size; the caller must not change the queue meanwhile)."""
    by_seq = q.messages.by_seq
    if q.fifo:
        keys = q.messages.order.irange((0, from_seq), (0, to_seq), inclusive=(True, False))
        return (by_seq[k[1]] for k in keys)
    # A priority queue's order is not by sequence. Walking the numbers of the range costs
    # what the messages in it cost (plus gaps) and stops with the page; sorting the whole
    # queue for every page made a deep queue's browse quadratic. A range much wider than the
    # queue (few messages spread thinly) is cheaper to pick out of the queue and sort.
    if to_seq - from_seq <= 2 * len(by_seq):
        get = by_seq.get
        return (m for m in map(get, range(from_seq, to_seq)) if m is not None)
    return (by_seq[s] for s in sorted(s for s in by_seq if from_seq <= s < to_seq))


def _first_in_range(q: QueueObject, from_seq: int, to_seq: int, max_msgs: int) -> list[Message]:
    """The first ``max_msgs`` of ``_in_range`` as a list, taken a slice (FIFO) or a run of
    sequence numbers (priority) at a time rather than a message at a time."""
    by_seq = q.messages.by_seq
    if q.fifo:
        keys = q.messages.order.irange((0, from_seq), (0, to_seq), inclusive=(True, False))
        return list(map(by_seq.__getitem__, map(_SEQ_OF_KEY, islice(keys, max_msgs))))
    if to_seq - from_seq > 2 * len(by_seq):
        return list(islice(_in_range(q, from_seq, to_seq), max_msgs))
    out: list[Message] = []
    pos = from_seq
    while pos < to_seq and len(out) < max_msgs:  # each number walked once, as _in_range does
        end = min(to_seq, pos + max_msgs - len(out))
        out += filter(None, map(by_seq.get, range(pos, end)))
        pos = end
    return out


def browse_range(qm: Engine, name: str, from_seq: int, to_seq: int, max_msgs: int = 0,
                 max_bytes: int = 0, overhead: int = 0) -> list[Message]:
    """Committed messages with ``from_seq <= seq < to_seq`` in sequence order, left in place.

    ``max_msgs``/``max_bytes`` (0: no limit) cut the answer short; at least one message is
    returned when any is in range, so a reader always advances. ``overhead`` is added to
    each message's size (a server's per-message framing). Expired messages are skipped.
    """
    if from_seq < 0 or to_seq < from_seq:
        raise failed(C.MQRC_OPTIONS_ERROR, f"sequence range [{from_seq}, {to_seq}) is not a range")
    q = local_queue(qm, name)
    if max_msgs and not q.messages.live_expiring:  # a server's page where nothing expires: taken at once
        return _page(q, from_seq, to_seq, max_msgs, max_bytes, overhead)
    now = qm.clock.now()
    out: list[Message] = []
    size = 0
    for msg in _in_range(q, from_seq, to_seq):
        expires = msg.expires_at  # msg.expired(now), inline: this loop runs per browsed message
        if expires is not None and now >= expires:
            continue
        cost = msg.data_length + overhead
        if out and ((max_msgs and len(out) >= max_msgs) or (max_bytes and size + cost > max_bytes)):
            break
        out.append(_as_read(q, msg))
        size += cost
    return out


def _page(q: QueueObject, from_seq: int, to_seq: int, max_msgs: int, max_bytes: int, overhead: int) -> list[Message]:
    """``browse_range``'s answer where no message on the queue has an expiry: the range's
    first ``max_msgs`` messages, cut where the running size passes ``max_bytes``, with a
    few passes over the page instead of a step per message."""
    msgs = _first_in_range(q, from_seq, to_seq, max_msgs)
    if max_bytes and msgs:
        lengths = data_lengths(msgs)
        sizes = list(accumulate(map(add, lengths, repeat(overhead)) if overhead else lengths))
        del msgs[max(1, bisect_right(sizes, max_bytes)):]
    if True in [m.v6 for m in msgs]:
        msgs = [_as_read(q, m) for m in msgs]
    return msgs


def _as_read(q: QueueObject, msg: Message) -> Message:
    """The message as a reader of the queue receives it with a message handle (the Spark
    connector's rows: properties in their map, the data without them): a message whose
    MQRFH2 was kept as put on a queue that is not PROPCTL(V6COMPAT) is read as its
    property folders taken out (engine.propctl), in a copy; any other is itself."""
    if not msg.v6 or q.attrs["PROPCTL"] == C.MQPROP_V6COMPAT:
        return msg
    md, data, props = propctl.leave_v6(msg.md, msg.body(msg.data_length), msg.properties)
    view = Message(msg.queue, msg.seq, md, data, msg.put_at, False)
    view.properties, view.expires_at = props, msg.expires_at
    return view


def remove_upto(qm: Engine, name: str, upto_seq: int, reader: str) -> int:
    """Remove every committed message with ``seq <= upto_seq``; record ``reader``'s position.

    Idempotent: removing again, or up to a lower sequence, removes nothing more and never
    moves the recorded position back. Never goes beyond the stable ``last_seq``. Returns
    how many messages were removed.
    """
    if not reader or len(reader) > MAX_READER_NAME:
        raise failed(C.MQRC_OPTIONS_ERROR, f"reader name must be 1..{MAX_READER_NAME} characters, got {len(reader)}")
    q = local_queue(qm, name)
    upto = min(upto_seq, _stable_last(qm, q))
    removed = _remove_through(qm, q, upto)
    pos = qm.readers.get((q.name, reader))
    if pos is None:
        pos = qm.readers[(q.name, reader)] = ReaderPosition(q.name, reader, -1)
    if upto > pos.acked:
        pos.acked = upto
        payload = json.dumps({"queue": q.name, "reader": reader, "acked": upto}, sort_keys=True).encode()
        pos.record_id = qm.write_record(pos.record_id, KIND_READER, payload)
        qm.need_sync()
    elif removed:
        qm.need_sync()
    return removed


def _remove_through(qm: Engine, q: QueueObject, upto: int) -> int:
    """Remove every committed message with ``seq <= upto`` (one slice of the queue's order
    per priority, then the journal records and browse locks of those that have any)."""
    # A browse cursor on a message about to leave comes off it (as a get's removal does):
    # one look per handle on the queue, not a set of the whole run.
    by_seq = q.messages.by_seq
    for hobj in q.handles:
        h = qm.handles.get(hobj)
        if h is not None and (cur := h.under_cursor) is not None and cur.seq <= upto and by_seq.get(cur.seq) is cur:
            h.under_cursor = None
    gone = q.messages.remove_through(upto)
    if any([m.record_id for m in gone]):
        for msg in gone:
            if msg.record_id:
                qm.staging.drop_message(msg)
                msg.record_id = 0
    if any([m.locked_by for m in gone]):
        for msg in gone:
            if msg.locked_by:
                holder = qm.handles.get(msg.locked_by)
                if holder is not None and holder.locked is msg:
                    holder.locked = None
                msg.locked_by = 0
    return len(gone)


def reader_positions(qm: Engine, name: str) -> list[tuple[str, int, int]]:
    """``(reader, acknowledged seq, lag)`` for every reader of the queue.

    Lag counts the messages (committed or in flight) beyond the reader's position; a
    sequence difference would mislead, as a restart skips the unused reserved numbers.
    """
    q = local_queue(qm, name)
    out = []
    for (qname, _), p in qm.readers.items():
        if qname == q.name:
            lag = len(q.messages) - q.messages.count_through(p.acked) + q.messages.uncommitted
            out.append((p.reader, p.acked, lag))
    return sorted(out)


def load_reader(qm: Engine, rec: Record) -> None:
    """Recovery: a reader position record back into the engine (an unreadable one is logged
    and skipped: losing a lag figure must not stop the queue manager)."""
    try:
        doc = json.loads(rec.payload)
        pos = ReaderPosition(str(doc["queue"]), str(doc["reader"]), int(doc["acked"]), rec.record_id)
    except (ValueError, KeyError, TypeError) as exc:
        log.error("event=unreadable_reader_position record_id=%d error=%s", rec.record_id, exc)
        return
    qm.readers[(pos.queue, pos.reader)] = pos
