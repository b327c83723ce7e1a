"""The message index of one local queue: delivery order, identifier lookup, depth.

Only messages that a getter may see are in the index; a message put or got inside an
uncommitted unit of work is held by that unit and counted in ``uncommitted`` so that
CURDEPTH and MAXDEPTH include it, as IBM MQ does.

The index also counts the message data it holds in memory, in its queue manager's ``Meter``
(engine/paging.py): every way a message enters or leaves a queue goes through ``insert``,
``load``, ``remove``, ``remove_through`` or ``clear``, so each is counted once.

Order is a sorted list of keys: ``(-priority, seq)`` on a PRIORITY queue, ``(0, seq)`` on
a FIFO one, so priority order with FIFO inside a priority falls out of the sort, and a
backed-out message returns to exactly the place it had.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterator
from operator import itemgetter
from typing import Protocol

from sortedcontainers import SortedList

from ferrymq.engine.message import Message, held_by_persistence
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import NONE_ID

Key = tuple[int, int]
_PERSISTENT = C.MQPER_PERSISTENT
_SEQ_OF_KEY = itemgetter(1)


class Meter:
    """Message data held in memory by one queue manager's queues (see engine/paging.py):
    ``persistent`` and ``transient`` (non-persistent) bytes, and the persistent messages that
    entered a queue while ``persistent`` was above ``budget`` (-1: none), to be paged out."""

    __slots__ = ("budget", "due", "persistent", "transient")

    def __init__(self, budget: int = -1) -> None:
        self.budget = budget
        self.persistent = 0
        self.transient = 0
        self.due: list[tuple[MessageQueue, Message]] = []


class Watcher(Protocol):
    """Told of every message that enters or leaves the index (a handle's selection view)."""

    def inserted(self, msg: Message) -> None: ...

    def removed(self, msg: Message) -> None: ...


class MessageQueue:
    __slots__ = ("by_correl_id", "by_msg_id", "by_seq", "expiring", "indexed", "live_expiring", "meter", "order",
                 "uncommitted", "watchers")

    def __init__(self, meter: Meter | None = None) -> None:
        self.meter = Meter() if meter is None else meter
        self.by_seq: dict[int, Message] = {}
        self.order = SortedList()
        # Identifier indexes hold sorted keys, so a get by CorrelId does not scan the queue.
        # They are built by the first get that matches an identifier and kept from then on:
        # most queues are only ever read in delivery order, and would pay for them per message.
        self.by_msg_id: dict[bytes, list[Key]] = {}
        self.by_correl_id: dict[bytes, list[Key]] = {}
        self.indexed = False
        # (expires_at, seq) of messages with an expiry, earliest first, so the expiry scan
        # looks at what is due and not at the whole queue. Entries of messages that have
        # left stay until they come up (or the heap is rebuilt when they outnumber the rest).
        self.expiring: list[tuple[float, int]] = []
        self.live_expiring = 0
        self.uncommitted = 0
        self.watchers: list[Watcher] = []

    def __len__(self) -> int:
        return len(self.by_seq)

    @property
    def depth(self) -> int:
        return len(self.by_seq) + self.uncommitted

    def insert(self, msg: Message) -> None:
        self.by_seq[msg.seq] = msg
        held = msg.held_bytes()
        if held:
            meter = self.meter
            if msg.persistence == _PERSISTENT:
                meter.persistent += held
                if meter.persistent > meter.budget >= 0 and msg.record_id:
                    meter.due.append((self, msg))
            else:
                meter.transient += held
        key = msg.key
        order = self.order
        last = order._lists[-1] if order._lists else None
        # A key after every other (FIFO, or one priority) goes on the end of the last
        # sublist, as SortedList.add would put it, without its search: the sublists' layout
        # as drop_runs reads it; an index (rebuilt when next needed) or a full sublist
        # leaves it to add.
        if last is not None and key > last[-1] and len(last) < order._load << 1 and not order._index:
            last.append(key)
            order._maxes[-1] = key
            order._len += 1
        else:
            order.add(key)
        if msg.expires_at is not None:
            heapq.heappush(self.expiring, (msg.expires_at, msg.seq))
            self.live_expiring += 1
        if self.indexed:
            bisect.insort(self.by_msg_id.setdefault(msg.msg_id, []), msg.key)
            if msg.correl_id != NONE_ID:
                bisect.insort(self.by_correl_id.setdefault(msg.correl_id, []), msg.key)
        if self.watchers:
            for w in self.watchers:
                w.inserted(msg)

    def load(self, msgs: list[Message]) -> None:
        """Fill an empty index at once (recovery): one sort instead of a million inserts."""
        assert not self.by_seq
        msgs.sort(key=_key_of)
        self.by_seq = {m.seq: m for m in msgs}
        for m in msgs:
            self._count(m, 1)
        self.order = SortedList(m.key for m in msgs)
        self.by_msg_id, self.by_correl_id, self.indexed = {}, {}, False
        self._rebuild_expiring()

    def _count(self, msg: Message, sign: int) -> None:
        held = msg.held_bytes()
        if held:
            if msg.persistence == _PERSISTENT:
                self.meter.persistent += sign * held
            else:
                self.meter.transient += sign * held

    def clear(self) -> list[Message]:
        """Empty the index (the queue is deleted); returns what it held, in sequence order."""
        gone = [m for _, m in sorted(self.by_seq.items())]
        for m in gone:
            self._count(m, -1)
        self.by_seq = {}
        self.order = SortedList()
        self.by_msg_id, self.by_correl_id, self.indexed = {}, {}, False
        self.expiring, self.live_expiring = [], 0
        return gone

    def _rebuild_expiring(self) -> None:
        self.expiring = [(m.expires_at, m.seq) for m in self.by_seq.values() if m.expires_at is not None]
        heapq.heapify(self.expiring)
        self.live_expiring = len(self.expiring)

    def due(self, now: float) -> list[Message]:
        """Messages on the queue whose expiry has passed, earliest first. Each is returned
        once; a caller that leaves one on the queue gives it back with ``recheck``."""
        heap, by_seq, out = self.expiring, self.by_seq, []
        seen: set[int] = set()  # a message backed out onto the queue has a second entry
        while heap and heap[0][0] <= now:
            seq = heapq.heappop(heap)[1]
            m = by_seq.get(seq)
            if m is not None and seq not in seen:
                seen.add(seq)
                out.append(m)
        return out

    def recheck(self, msg: Message) -> None:
        """Offer a message ``due`` returned to the next scan again (it stayed on the queue)."""
        assert msg.expires_at is not None
        heapq.heappush(self.expiring, (msg.expires_at, msg.seq))

    def _index_identifiers(self) -> None:
        by_seq = self.by_seq
        for key in self.order:  # in key order, so each identifier list is born sorted
            m = by_seq[key[1]]
            self.by_msg_id.setdefault(m.msg_id, []).append(key)
            if m.correl_id != NONE_ID:
                self.by_correl_id.setdefault(m.correl_id, []).append(key)
        self.indexed = True

    def remove(self, msg: Message, first: bool = False) -> None:
        """Take a message out of the index (``first``: the caller knows it holds the
        first key, which pops without a search)."""
        del self.by_seq[msg.seq]
        held = msg.held_bytes()
        if held:
            if msg.persistence == _PERSISTENT:
                self.meter.persistent -= held
            else:
                self.meter.transient -= held
        if first:
            order = self.order
            head = order._lists[0]
            # The first key leaves the first sublist as SortedList.pop(0) takes it, without
            # its calls, when that sublist keeps a key and its last (its max), and needs no
            # merge (it stays over half the load, or is the only one), and there is no
            # positional index to update.
            if (len(head) > 1 and (len(head) > (order._load >> 1) + 1 or len(order._lists) == 1)
                    and not order._index):
                del head[0]
                order._len -= 1
            else:
                order.pop(0)
        else:
            self.order.remove(msg.key)
        if msg.expires_at is not None:
            self.live_expiring -= 1
            if len(self.expiring) > 2 * self.live_expiring + 1024:
                self._rebuild_expiring()
        if self.indexed:
            _unindex(self.by_msg_id, msg.msg_id, msg.key)
            if msg.correl_id != NONE_ID:
                _unindex(self.by_correl_id, msg.correl_id, msg.key)
        if self.watchers:
            for w in self.watchers:
                w.removed(msg)

    def _runs_through(self, upto: int) -> Iterator[tuple[int, int]]:
        """``(start, stop)`` index runs of the order holding the keys with ``seq <= upto``.

        Within one priority the keys are in sequence order, so each priority's keys up to
        ``upto`` are one run at the start of its part of the order: at most ten runs,
        found by bisection. (The order must not change while the runs are used.)"""
        order = self.order
        i = 0
        while i < len(order):
            band = order[i][0]
            j = order.bisect_right((band, upto))
            if j > i:
                yield i, j
            i = order.bisect_left((band + 1,))

    def first_seq(self) -> int | None:
        """The lowest sequence number in the index (None when it is empty)."""
        order = self.order
        firsts = []
        i = 0
        while i < len(order):
            firsts.append(order[i][1])
            i = order.bisect_left((order[i][0] + 1,))
        return min(firsts, default=None)

    def count_through(self, upto: int) -> int:
        """How many messages in the index have ``seq <= upto``."""
        return sum(j - i for i, j in self._runs_through(upto))

    def remove_through(self, upto: int) -> list[Message]:
        """Take every message with ``seq <= upto`` out of the index at once (a reader's
        acknowledgement), in key order: each priority's run of keys leaves as one slice
        instead of a search per message."""
        order, by_seq = self.order, self.by_seq
        runs = list(self._runs_through(upto))
        keys: list[Key] = []
        for i, j in runs:
            keys += order[i:j]
        drop_runs(order, runs)
        gone = list(map(by_seq.pop, map(_SEQ_OF_KEY, keys)))
        persistent, transient = held_by_persistence(gone)
        self.meter.persistent -= persistent
        self.meter.transient -= transient
        if self.indexed:
            for msg in gone:
                _unindex(self.by_msg_id, msg.msg_id, msg.key)
                if msg.correl_id != NONE_ID:
                    _unindex(self.by_correl_id, msg.correl_id, msg.key)
        for w in self.watchers:
            for msg in gone:
                w.removed(msg)
        if self.live_expiring:
            expiring = len(gone) - [m.expires_at for m in gone].count(None)
            if expiring:
                self.live_expiring -= expiring
                if len(self.expiring) > 2 * self.live_expiring + 1024:
                    self._rebuild_expiring()
        return gone

    def head(self) -> Message | None:
        """The first message in delivery order (None: the index is empty): a run of gets'
        search for the next one, read from the first sublist without SortedList's calls."""
        lists = self.order._lists
        return self.by_seq[lists[0][0][1]] if lists else None

    def get(self, key: Key) -> Message | None:
        return self.by_seq.get(key[1])

    def keys_after(self, after: Key | None) -> Iterator[Key]:
        """Keys in delivery order, strictly after ``after`` (all when None)."""
        if after is None:
            return iter(self.order)
        return iter(self.order.irange(minimum=after, inclusive=(False, True)))

    def candidates(self, msg_id: bytes | None, correl_id: bytes | None, after: Key | None) -> Iterator[Key]:
        """Keys that may match, in delivery order, using the smallest identifier index."""
        lists = []
        if (msg_id is not None or correl_id is not None) and not self.indexed:
            self._index_identifiers()
        if msg_id is not None:
            lists.append(self.by_msg_id.get(msg_id, []))
        if correl_id is not None:
            lists.append(self.by_correl_id.get(correl_id, []))
        if not lists:
            return self.keys_after(after)
        keys = min(lists, key=len)
        start = 0 if after is None else bisect.bisect_right(keys, after)
        return iter(keys[start:])


def drop_runs(order: SortedList, runs: list[tuple[int, int]]) -> None:
    """``del order[i:j]`` for each of ``runs`` (ascending, disjoint index runs), in one pass
    over the list's sublists: a sublist inside a run goes whole, one a run ends in is cut.

    SortedList's own slice deletion sorts everything it keeps again when the slice is over
    an eighth of the list, and otherwise deletes one index at a time: a reader's 50,000-key
    removal from a queue of a million cost 1.7 us per removed key (0.23 from one of 200,000,
    re-sorting the rest); this costs 0.05. It works on the layout sortedcontainers
    documents for its implementation (``_lists`` of sorted sublists, their ``_maxes``,
    ``_len``, and the positional ``_index``, rebuilt when next needed), as its own methods
    do; the tests hold the result to SortedList._check, the list's own invariants."""
    if not runs:
        return
    kept: list[list[Key]] = []
    pos = 0
    for sub in order._lists:
        start, pos = pos, pos + len(sub)
        cuts = [(max(i, start) - start, min(j, pos) - start) for i, j in runs if i < pos and j > start]
        if not cuts:
            kept.append(sub)
            continue
        piece: list[Key] = []
        at = 0
        for i, j in cuts:
            piece += sub[at:i]
            at = j
        piece += sub[at:]
        if piece:
            kept.append(piece)
    # Every sublist but the last holds at least half the load: a cut piece shorter than
    # that joins the next sublist (split in two again if that makes it over double).
    half, double = order._load >> 1, order._load << 1
    joined: list[list[Key]] = []
    for sub in kept:
        if joined and len(joined[-1]) < half:
            both = joined[-1] + sub
            mid = len(both) >> 1
            joined[-1:] = [both[:mid], both[mid:]] if len(both) > double else [both]
        else:
            joined.append(sub)
    order._lists[:] = joined
    order._maxes[:] = [sub[-1] for sub in joined]
    order._len = pos - sum(j - i for i, j in runs)
    del order._index[:]


def _key_of(m: Message) -> Key:
    return m.key


def _unindex(index: dict[bytes, list[Key]], ident: bytes, key: Key) -> None:
    keys = index[ident]
    if len(keys) == 1:
        del index[ident]
    else:
        del keys[bisect.bisect_left(keys, key)]
