"""Client side of sequence-range access and prepared units of work, shared by the sync
and async clients: request builders and reply readers (the clients only add the call).

- ``queue_range``: a queue's ``[first_seq, last_seq]`` and depth; ``last_seq`` never
  passes a sequence still inside an uncommitted put, so a reader planning up to it
  skips nothing.
- ``browse_range``: messages with ``from_seq <= seq < to_seq``, left on the queue;
  ``browse_columns`` the same page as columns, for readers that build arrays from it.
- ``remove_upto``: remove everything up to a sequence, idempotently, recording the named
  reader's position (``reader_positions`` shows it with the reader's lag).
- ``prepare``/``resolve``/``in_doubt``: the connection's unit of work becomes in-doubt
  under a global transaction id; any connection commits or backs it out by that id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ferrymq.client.message import Message
from ferrymq.client.session import Session, check
from ferrymq.protocol import seqframes as F


@dataclass(frozen=True, slots=True)
class QueueRange:
    queue: str
    first_seq: int
    last_seq: int
    depth: int


@dataclass(frozen=True, slots=True)
class ReaderPosition:
    reader: str
    acked_seq: int
    lag: int  # messages beyond the reader's position


class SequencedMessage(Message):
    """A browsed message with its queue sequence number and put time (epoch seconds)."""

    __slots__ = ("put_at", "queue", "seq")

    def __init__(self, queue: str, entry: F.RangeEntry) -> None:
        super().__init__(entry.md, entry.data, len(entry.data), entry.seq.to_bytes(8, "big") + bytes(8),
                         entry.properties)
        self.queue = queue
        self.seq = entry.seq
        self.put_at = entry.put_at


@dataclass(frozen=True, slots=True)
class ColumnPage:
    """A browsed page as columns (BROWSE_COLUMNS): ``columns`` holds the messages' sequence
    numbers, put times, MQMDs, properties and data as protocol/seqframes.py describes
    (arrays a reader can view with numpy or Arrow without a pass per message)."""

    queue: str
    columns: F.BrowseColumnsReply

    def __len__(self) -> int:
        return self.columns.count

    @property
    def last_seq(self) -> int:
        """The sequence number of the page's last message (the page must not be empty)."""
        return int.from_bytes(self.columns.seqs[-8:], "little", signed=True)


def range_request(s: Session, queue: str) -> F.SeqRange:
    return F.SeqRange(s.next_corr(), queue)


def range_result(reply: Any) -> QueueRange:
    r = check(reply)
    return QueueRange(r.queue, r.first_seq, r.last_seq, r.depth)


def browse_request(s: Session, queue: str, from_seq: int, to_seq: int, max_msgs: int, max_bytes: int) -> F.BrowseRange:
    if from_seq < 0 or to_seq < from_seq:
        raise ValueError(f"sequence range [{from_seq}, {to_seq}) is not a range")
    return F.BrowseRange(s.next_corr(), queue, from_seq, to_seq, max_msgs, max_bytes)


def browse_result(queue: str, reply: Any) -> list[SequencedMessage]:
    return [SequencedMessage(queue, e) for e in check(reply).entries]


def columns_request(s: Session, queue: str, from_seq: int, to_seq: int, max_msgs: int,
                    max_bytes: int) -> F.BrowseColumns:
    if from_seq < 0 or to_seq < from_seq:
        raise ValueError(f"sequence range [{from_seq}, {to_seq}) is not a range")
    return F.BrowseColumns(s.next_corr(), queue, from_seq, to_seq, max_msgs, max_bytes)


def columns_result(queue: str, reply: Any) -> ColumnPage:
    return ColumnPage(queue, check(reply))


def remove_request(s: Session, queue: str, upto_seq: int, reader: str) -> F.RemoveUpto:
    return F.RemoveUpto(s.next_corr(), queue, upto_seq, reader)


def removed_result(reply: Any) -> int:
    return int(check(reply).removed)


def readers_request(s: Session, queue: str) -> F.Readers:
    return F.Readers(s.next_corr(), queue)


def readers_result(reply: Any) -> list[ReaderPosition]:
    return [ReaderPosition(*row) for row in check(reply).readers]


def prepare_request(s: Session, xid: bytes) -> F.Prepare:
    return F.Prepare(s.next_corr(), _xid(xid))


def prepare_result(reply: Any) -> int:
    return int(check(reply).operations)


def resolve_request(s: Session, xid: bytes, commit: bool) -> F.Resolve:
    return F.Resolve(s.next_corr(), _xid(xid), commit)


def resolve_result(reply: Any) -> bool:
    return bool(check(reply).found)


def in_doubt_request(s: Session) -> F.InDoubt:
    return F.InDoubt(s.next_corr())


def in_doubt_result(reply: Any) -> list[bytes]:
    return list(check(reply).xids)


def _xid(xid: bytes | str) -> bytes:
    raw = xid.encode("utf-8") if isinstance(xid, str) else bytes(xid)
    if not 1 <= len(raw) <= F.MAX_XID:
        raise ValueError(f"XID must be 1..{F.MAX_XID} bytes, got {len(raw)}")
    return raw
