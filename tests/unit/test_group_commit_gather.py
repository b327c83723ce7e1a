"""Group commit gathers committers that take turns (server/commit.py).

Two connections that each commit in a loop, with a little work between commits, on a disk
whose sync takes longer than that work: without gathering each commits while the other's
sync runs, so every sync carries one commit. With it, the second commit rides the first's
sync. A lone committer is never delayed.
"""

from __future__ import annotations

import asyncio
import functools
import time

import pytest

from ferrymq.server import commit
from ferrymq.server.commit import GroupCommitter
from ferrymq.store.journal import Pending
from ferrymq.store.memory import MemoryJournal

SYNC = 0.02  # seconds one write and fdatasync takes on the slow disk (room for a loaded machine)
WORKS = (0.001, 0.003)  # seconds each program works between its commits (a consumer's, a producer's)
UNITS = 20


class SlowDisk(MemoryJournal):
    """The memory journal, with each write taking as long as a slow disk's fdatasync."""

    def write_pending(self, pending: Pending) -> None:
        time.sleep(SYNC)
        super().write_pending(pending)


async def _committer(gc: GroupCommitter, journal: MemoryJournal, who: object, first: int, work: float,
                     waits: list[float]) -> None:
    for n in range(UNITS):
        txid = first + n
        journal.add(txid, 1, b"x" * 100, txid)
        lsn = journal.commit(txid)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        began = time.perf_counter()
        gc.after(lsn, functools.partial(done.set_result, None), who)
        await done
        waits.append(time.perf_counter() - began)
        await asyncio.sleep(work)


async def _run(committers: int) -> tuple[GroupCommitter, list[float]]:
    journal = SlowDisk()
    journal.load()
    gc = GroupCommitter(journal)
    gc.start()
    waits: list[float] = []
    await asyncio.gather(*(_committer(gc, journal, object(), 1000 * (i + 1), WORKS[i], waits)
                           for i in range(committers)))
    await gc.stop()
    return gc, waits


async def test_two_committers_taking_turns_share_syncs() -> None:
    # Taking turns they would need one sync per commit (2 x UNITS); gathered, about one per pair.
    # The gathering wait is at most GATHER_MAX (10 ms): on a machine loaded far beyond its cores
    # a woken committer can come back later than that, so one run of three must show it. On
    # code that does not gather, every run takes ~2 x UNITS syncs and none passes.
    seen = []
    for _ in range(3):
        gc, _ = await _run(2)
        seen.append((gc.syncs, gc.gathers))
        # Under heavy load commits also meet by chance, so only some of the sharing may be
        # gathering's; it must have caught someone.
        if gc.syncs <= UNITS * 1.3 and gc.gathers >= 1:
            return
    pytest.fail(f"(syncs, gathers) per run {seen}: gathering never shared syncs")


async def test_without_gathering_they_take_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The premise: with no gathering wait, every sync carries one commit."""
    monkeypatch.setattr(commit, "GATHER_MAX", 0.0)
    seen = []
    for _ in range(3):  # as above: under heavy load the two may meet by chance in one run
        gc, _ = await _run(2)
        seen.append(gc.syncs)
        if gc.syncs >= UNITS * 1.7:
            return
    pytest.fail(f"syncs per run {seen}: the committers never took turns")


async def test_a_lone_committer_is_never_delayed() -> None:
    gc, _ = await _run(1)
    assert gc.syncs == UNITS
    assert gc.gathers == 0 and gc.gather_misses == 0  # no gathering wait was ever begun
