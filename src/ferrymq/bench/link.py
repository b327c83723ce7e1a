"""What ties a run's processes together: the runner (main process) starts producer,
consumer, requester and responder processes; each reports back through a ``Link``.

A process says it is ready (connected, subscribed), waits for ``go`` so that all start
together, does its part, and reports when it began and ended on the wall clock
(``time.time()``, one clock for every process on the machine), how many messages it
moved and the CPU time it used. Consumers stop once the total taken by all of them
reaches the count, or once the producers are done and nothing more arrives (a broker
that dropped messages: the report says how many arrived, never a rate).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

IDLE_AFTER_PRODUCERS = 2.0  # seconds without a message, producers done: the rest was lost
POLL = 0.05  # how often a waiting consumer looks at the shared tally


@dataclass
class Link:
    """Multiprocessing objects shared by the processes of one run (spawn context)."""

    reports: Any  # Queue of dicts
    go: Any  # Event: every process is ready, start now
    producers_done: Any  # Event
    taken: Any  # Value('q'): messages taken by all consumers (flushed in chunks)
    deadline: float  # wall-clock time after which every process gives up

    @classmethod
    def make(cls, ctx: Any, time_limit: float) -> Link:
        return cls(ctx.Queue(), ctx.Event(), ctx.Event(), ctx.Value("q", 0), time.time() + time_limit)

    def ready(self, role: str) -> None:
        self.reports.put({"ready": role})

    def wait_go(self) -> None:
        if not self.go.wait(max(0.0, self.deadline - time.time())):
            raise TimeoutError("the run did not start before its time limit")

    def late(self) -> bool:
        return time.time() > self.deadline


class Tally:
    """A consumer's count, shared in chunks (a lock per message would cost as much as a
    small message's handling in the faster clients)."""

    CHUNK = 64

    def __init__(self, link: Link, total: int, consumers: int) -> None:
        self.link = link
        self.total = total
        self.alone = consumers == 1
        self.count = 0
        self.unshared = 0
        self.first = 0.0
        self.last = 0.0
        self._done_seen = 0.0

    def add(self, n: int = 1) -> bool:
        """Count ``n`` messages just taken; True when every message of the run is taken."""
        self.last = time.time()
        if not self.count:
            self.first = self.last
        self.count += n
        if self.alone:
            return self.count >= self.total
        self.unshared += n
        if self.unshared >= self.CHUNK:
            self._share()
        return False

    def _share(self) -> None:
        if self.unshared:
            with self.link.taken.get_lock():
                self.link.taken.value += self.unshared
            self.unshared = 0

    def idle(self) -> bool:
        """Nothing arrived for a while: True when this consumer should stop (all taken by
        someone, the rest lost, or the time limit passed)."""
        if self.alone and self.count >= self.total:
            return True
        self._share()
        if self.link.taken.value >= self.total or self.link.late():
            return True
        if not self.link.producers_done.is_set():
            return False
        now = time.time()
        self._done_seen = self._done_seen or now
        return now - max(self.last, self._done_seen) > IDLE_AFTER_PRODUCERS

    def report(self, cpu: float) -> dict[str, Any]:
        return {"role": "consumer", "count": self.count, "first": self.first, "last": self.last, "cpu": cpu}


class Clock:
    """Wall-clock start, end and CPU time of one process's part."""

    def __init__(self) -> None:
        self.first = time.time()
        self._cpu = time.process_time()

    def cpu(self) -> float:
        return time.process_time() - self._cpu

    def report(self, role: str, count: int, **more: Any) -> dict[str, Any]:
        return {"role": role, "count": count, "first": self.first, "last": time.time(), "cpu": self.cpu(), **more}


async def until_done(done: asyncio.Event, tally: Tally) -> None:
    """An asyncio consumer's wait: until its callback counted the last message, or the
    tally says to stop (all taken by others, the rest lost, the time limit)."""
    while not done.is_set():
        try:
            await asyncio.wait_for(done.wait(), POLL)
        except TimeoutError:
            if tally.idle():
                return


def use_uvloop() -> None:
    """Run asyncio clients on uvloop when it is installed (their fastest setting)."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
