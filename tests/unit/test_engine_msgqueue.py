"""The queue index's sequence-range operations (a reader's acknowledgement removes a run
at once; the lowest sequence and counts come from bisection) against a plain model: any
priorities, FIFO or not, holes, identifier indexes and selection watchers kept in step."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sortedcontainers import SortedList

from ferrymq.engine.message import Message
from ferrymq.engine.msgqueue import MessageQueue, drop_runs
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD, NONE_ID


class Seen:
    """A watcher (as a selection view is one) that notes what leaves the index."""

    def __init__(self) -> None:
        self.gone: list[int] = []

    def inserted(self, msg: Message) -> None:
        pass

    def removed(self, msg: Message) -> None:
        self.gone.append(msg.seq)


def queue_of(priorities: list[int], fifo: bool, holes: set[int], indexed: bool) -> tuple[MessageQueue, Seen]:
    q = MessageQueue()
    q.order._reset(4)  # sublists of 4 to 8 keys: a removal spans and cuts several of them
    for seq, prio in enumerate(priorities, start=1):
        md = MQMD(version=2, priority=prio, msg_id=seq.to_bytes(24, "big"), correl_id=bytes([seq % 3]) * 24,
                  expiry=C.MQEI_UNLIMITED if seq % 4 else 100, persistence=int(seq % 5 == 0))
        q.insert(Message("Q", seq, md, b"x" * (seq % 7), 1.0e9, fifo))
    for seq in holes & set(q.by_seq):
        q.remove(q.by_seq[seq])
    if indexed:
        list(q.candidates(b"\0" * 24, None, None))  # builds the identifier indexes
    w = Seen()
    q.watchers.append(w)
    return q, w


@given(st.lists(st.integers(0, 12), max_size=60), st.booleans(), st.sets(st.integers(1, 60)),
       st.integers(-1, 65), st.booleans())
def test_range_operations_match_a_plain_model(priorities: list[int], fifo: bool, holes: set[int], upto: int,
                                               indexed: bool) -> None:
    q, w = queue_of(priorities, fifo, holes, indexed)
    live = sorted(q.by_seq)
    assert q.first_seq() == (live[0] if live else None)
    assert q.count_through(upto) == len([s for s in live if s <= upto])
    expiring = q.live_expiring
    gone = q.remove_through(upto)
    assert sorted(m.seq for m in gone) == sorted(w.gone) == [s for s in live if s <= upto]
    assert sorted(q.by_seq) == [s for s in live if s > upto]
    assert list(q.order) == sorted(m.key for m in q.by_seq.values())
    q.order._check()  # the sorted list's own invariants (its sublists, maxima, length, index)
    assert q.live_expiring == expiring - sum(1 for m in gone if m.expires_at is not None)
    # The data held in memory, persistent and not, is what the messages left hold.
    kept = list(q.by_seq.values())
    assert q.meter.persistent == sum(m.data_length for m in kept if m.persistence == C.MQPER_PERSISTENT)
    assert q.meter.transient == sum(m.data_length for m in kept if m.persistence != C.MQPER_PERSISTENT)
    if indexed:
        assert sorted(k for keys in q.by_msg_id.values() for k in keys) == list(q.order)
        with_correl_id = sorted(m.key for m in q.by_seq.values() if m.correl_id != NONE_ID)  # NONE_ID: not indexed
        assert sorted(k for keys in q.by_correl_id.values() for k in keys) == with_correl_id
    assert q.remove_through(upto) == [] and q.count_through(upto) == 0


@given(st.integers(1, 300), st.integers(4, 16), st.lists(st.integers(0, 300), max_size=12))
def test_drop_runs_is_del_of_each_run(n: int, load: int, bounds: list[int]) -> None:
    order = SortedList(range(n))
    order._reset(load)
    cuts = sorted({min(b, n) for b in bounds})
    runs = [(i, j) for i, j in zip(cuts[::2], cuts[1::2], strict=False) if j > i]
    model = list(order)
    for i, j in reversed(runs):
        del model[i:j]
    drop_runs(order, runs)
    order._check()
    assert list(order) == model
    assert [order[k] for k in range(len(model))] == model  # positions through the rebuilt index
    order.add(-1)  # and it stays a working sorted list
    assert list(order) == [-1, *model]


@pytest.mark.parametrize("upto", [300, 5_000])  # the two ways SortedList deletes a slice
def test_removal_neither_re_sorts_nor_deletes_key_by_key(upto: int, monkeypatch: pytest.MonkeyPatch) -> None:
    q = MessageQueue()
    for seq in range(1, 10_001):
        q.insert(Message("Q", seq, MQMD(version=2, msg_id=seq.to_bytes(24, "big")), b"x", 1.0e9, True))
    calls: list[str] = []
    monkeypatch.setattr(SortedList, "_update", lambda *a: calls.append("update"))
    monkeypatch.setattr(SortedList, "_delete", lambda *a: calls.append("delete"))
    assert len(q.remove_through(upto)) == upto
    assert calls == []
    assert q.first_seq() == upto + 1 and len(q.order) == 10_000 - upto


@given(st.lists(st.tuples(st.sampled_from(["put", "put", "put", "take", "take", "look"]), st.integers(0, 9)),
                max_size=120), st.booleans(), st.integers(4, 6))
def test_puts_and_head_takes_keep_the_order_a_sorted_list_keeps(steps: list[tuple[str, int]], fifo: bool,
                                                                 load: int) -> None:
    """insert's append at the end and remove's take of the first key (done without
    SortedList's calls when they may be) leave the list as SortedList's own would: any
    priorities, sublists split and merged, a positional index built in between ("look")."""
    q = MessageQueue()
    q.order._reset(load)
    model: list[tuple[int, int]] = []
    for seq, (step, prio) in enumerate(steps, start=1):
        if step == "put":
            msg = Message("Q", seq, MQMD(version=2, priority=prio, msg_id=seq.to_bytes(24, "big")), b"x", 1.0e9, fifo)
            q.insert(msg)
            model.append(msg.key)
            model.sort()
        elif step == "take" and model:
            head = q.head()
            assert head is not None and head.key == model[0]
            q.remove(head, first=True)
            del model[0]
        elif step == "look" and model:
            assert q.order[len(model) // 2] == model[len(model) // 2]  # builds SortedList's index
        q.order._check()
        assert list(q.order) == model
        assert sorted(q.by_seq) == sorted(k[1] for k in model)
    assert (q.head() is None) == (not model)
