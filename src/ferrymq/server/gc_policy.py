"""The queue-manager process's policy for Python's cyclic garbage collector.

Queued messages are long-lived Python objects, and CPython's full collection scans every
tracked object each time the objects that survived since the last one reach a quarter of
the total: every message is scanned again and again while it waits on its queue. Profiled
on a queue filling from 0 to 800k messages of 1 KiB under syncpoint, full collections cost
6-11 us per put (more than the put itself), and the figure grows with the depth.

``FreezeSurvivors`` moves what survives a full collection into the permanent generation
(``gc.freeze``), so the next full collection scans only what was allocated since. Reference
counting still frees frozen objects; only garbage *cycles* among them wait. To bound that,
whenever the heap has grown past ``regrow`` times what it was after the last thorough
collection, the frozen objects are thawed (``gc.unfreeze``) and the next full collection
scans everything again: each object is rescanned about once per fourfold growth of the
heap (``regrow`` 4) instead of about four times in all, and frozen cycles never outlive that
growth. The heap is measured by ``sys.getallocatedblocks`` (a walk over the allocator's
arenas): counting the frozen objects themselves walks every one of them, which cost more
than it saved.

The young generations still scanned each new message twice more before its first full
collection (about 1.5 us of the 4 us a put run cost per message, profiled). A put run's
messages are long-lived by nature, so the server calls ``after_burst()`` after each run:
what exists then is frozen at once, and every ``CHECK_EVERY`` bursts the heap is measured;
past ``regrow`` times the base, everything is thawed and collected there and then.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

CHECK_EVERY = 64  # bursts between two measures of the heap (each walks the allocator's arenas)
_active: FreezeSurvivors | None = None


def after_burst() -> None:
    """Many long-lived objects were just made (a put run): see FreezeSurvivors.after_burst.
    Does nothing unless a policy is installed (the queue-manager process installs one)."""
    if _active is not None:
        _active.after_burst()


class FreezeSurvivors:
    """A ``gc.callbacks`` hook; ``install`` it once in the process that serves."""

    def __init__(self, regrow: float = 4.0, floor: int = 500_000) -> None:
        self.regrow = regrow
        self.floor = floor  # a small heap is always collected thoroughly: it costs little
        self.base = 0  # allocated blocks after the last thorough collection
        self.thorough = True  # the next full collection sees every object
        self.freezes = 0
        self.thaws = 0
        self.bursts = 0

    def install(self) -> None:
        global _active
        if self.on_collect not in gc.callbacks:
            gc.callbacks.append(self.on_collect)
        _active = self

    def uninstall(self) -> None:
        global _active
        if self.on_collect in gc.callbacks:
            gc.callbacks.remove(self.on_collect)
        if _active is self:
            _active = None

    def after_burst(self) -> None:
        """Freeze what exists now; every CHECK_EVERY calls, thaw and collect everything if
        the heap has grown past ``regrow`` times what it was after the last thorough pass."""
        gc.freeze()
        self.bursts += 1
        if self.bursts % CHECK_EVERY == 0 and sys.getallocatedblocks() > self.regrow * max(self.base, self.floor):
            gc.unfreeze()
            self.thaws += 1
            self.thorough = True
            gc.collect()  # thorough: on_collect freezes its survivors and takes the new base

    def on_collect(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        # The collection is over: moving its survivors to the permanent generation is what
        # gc.freeze does between collections too.
        gc.freeze()
        self.freezes += 1
        heap = sys.getallocatedblocks()
        if self.thorough:
            self.base, self.thorough = heap, False
        elif heap <= self.floor or heap > self.regrow * self.base:
            gc.unfreeze()
            self.thaws += 1
            self.thorough = True
