"""The queue-manager process's collector policy: survivors of a full collection are frozen,
and thawed again once they have grown enough that cycles among them must be looked at."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from ferrymq.engine.api import SystemClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.server import QueueManagerServer, gc_policy
from ferrymq.server.gc_policy import FreezeSurvivors
from ferrymq.store.memory import MemoryJournal


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def policy() -> Iterator[FreezeSurvivors]:
    gc.collect()
    gc.unfreeze()
    p = FreezeSurvivors(regrow=2.0, floor=0)
    p.install()
    gc.disable()  # only the tests' own collections: automatic ones would thaw at moments of their choosing
    try:
        yield p
    finally:
        gc.enable()
        p.uninstall()
        gc.unfreeze()


def _cycle() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_survivors_of_a_full_collection_are_frozen(policy: FreezeSurvivors) -> None:
    kept = [_Node() for _ in range(100)]
    gc.collect()
    assert policy.freezes == 1 and gc.get_freeze_count() >= len(kept)
    # what is frozen is no longer scanned: a collection of young objects leaves it alone
    assert not any(gc.is_tracked(n) and n in gc.get_objects(2) for n in kept[:3])


def test_a_frozen_cycle_is_reclaimed_once_the_heap_has_grown(policy: FreezeSurvivors) -> None:
    gc.collect()  # the first collection is thorough; its survivors are the base
    ref = _cycle()
    gc.collect()  # the cycle is garbage here already and is reclaimed: it was not frozen yet
    assert ref() is None
    ref = _cycle()
    holder = [ref()]
    gc.collect()  # now the cycle survives (held) and is frozen
    holder.clear()
    gc.collect()
    assert ref() is not None, "frozen: not scanned until the heap grows"
    growth = [_Node() for _ in range(policy.base * 2 + 10)]
    gc.collect()  # frozen count past regrow x base: thawed
    assert policy.thaws == 1
    gc.collect()  # the thorough collection sees the cycle
    assert ref() is None
    del growth


def test_installing_twice_adds_one_hook() -> None:
    p = FreezeSurvivors()
    p.install()
    p.install()
    try:
        assert gc.callbacks.count(p.on_collect) == 1
    finally:
        p.uninstall()
    assert p.on_collect not in gc.callbacks


def test_bursts_are_frozen_at_once_and_a_grown_heap_is_thawed_and_collected(policy: FreezeSurvivors) -> None:
    gc.collect()  # thorough: the base
    kept = [_Node() for _ in range(1000)]
    ref = _cycle()
    holder = [ref()]
    gc_policy.after_burst()  # a put run just made these
    assert policy.bursts == 1 and gc.get_freeze_count() >= len(kept)
    holder.clear()
    for _ in range(gc_policy.CHECK_EVERY - 1):
        gc_policy.after_burst()
    assert policy.thaws == 0 and ref() is not None, "the heap has not grown: the frozen cycle waits"
    growth = [_Node() for _ in range(int(policy.regrow * policy.base))]
    for _ in range(gc_policy.CHECK_EVERY):
        gc_policy.after_burst()
    assert policy.thaws == 1 and ref() is None  # thawed and collected there and then
    del growth, kept


def test_after_burst_does_nothing_without_a_policy() -> None:
    assert gc_policy._active is None
    frozen = gc.get_freeze_count()
    gc_policy.after_burst()
    assert gc.get_freeze_count() == frozen


def test_the_queue_managers_own_agents_calls_are_a_burst(policy: FreezeSurvivors) -> None:
    """A receiving channel's batch (the agents' engine calls, ``agent_done``) is frozen as
    a client's put run is: its messages wait on their queue."""
    server = QueueManagerServer(QueueManager.start("QM", MemoryJournal(), SystemClock()), "127.0.0.1", 0)
    kept = [[n] for n in range(10)]
    server.agent_done()
    assert policy.bursts == 1 and gc.get_freeze_count() >= len(kept)
