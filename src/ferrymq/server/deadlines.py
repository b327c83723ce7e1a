"""The deadlines of waiting gets: one event-loop timer for all of them.

An MQGET with a wait interval must end with MQRC_NO_MSG_AVAILABLE when the interval passes
with nothing for it. One loop timer per wait cost a TimerHandle made and cancelled on every
wait, and nearly every wait of a request/reply exchange is answered long before its
interval. Here a wait costs a heap entry: the heap holds (deadline, waiter id); a wait that
ends otherwise is only forgotten in ``live``, and its entry is dropped when it reaches the
top (or when dead entries outnumber the live ones, by a rebuild). One timer is armed for the
earliest deadline.

Timing: a wait ends when the loop's clock reaches its deadline, within ``SLACK`` (the
millisecond granularity of uvloop's own timers, which the per-wait timers had too), never
earlier than that.
"""

from __future__ import annotations

import asyncio
import heapq
import math
from collections.abc import Callable

SLACK = 0.001
"""Seconds before its deadline at which a wait may be ended (the loop timers' granularity)."""
_REBUILD_FLOOR = 1024


class Deadlines:
    """Waits' deadlines on the loop's clock; ``expire(waiter_id)`` is called for each one
    that passes while the wait is still known (see the module docstring)."""

    def __init__(self, expire: Callable[[int], None]) -> None:
        self._expire = expire
        self._heap: list[tuple[float, int]] = []
        self._live: dict[int, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        # The loop, taken once: asyncio.get_running_loop() calls getpid() (a system call) to
        # notice a fork, and a request/reply hop adds a wait every time. close() forgets it.
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._live)

    def add(self, waiter_id: int, timeout: float) -> None:
        """Expire ``waiter_id`` ``timeout`` seconds from now unless discarded first."""
        loop = self._loop or self._bind()
        when = loop.time() + timeout
        self._live[waiter_id] = when
        heapq.heappush(self._heap, (when, waiter_id))
        if when < self._timer_at:
            self._arm(loop, when)
        elif len(self._heap) > 2 * len(self._live) + _REBUILD_FLOOR:
            self._heap = [(w, wid) for wid, w in self._live.items()]
            heapq.heapify(self._heap)

    def discard(self, waiter_id: int) -> None:
        """The wait ended otherwise (answered, cancelled, its connection gone)."""
        self._live.pop(waiter_id, None)

    def close(self) -> None:
        """Forget every wait and stop the timer (the server is stopping)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
        self._heap.clear()
        self._live.clear()
        self._loop = None

    def _bind(self) -> asyncio.AbstractEventLoop:
        self._loop = asyncio.get_running_loop()
        return self._loop

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = loop.call_at(when, self._fire), when

    def _fire(self) -> None:
        self._timer, self._timer_at = None, math.inf
        loop = self._loop or self._bind()
        now = loop.time() + SLACK
        heap, live = self._heap, self._live
        due: list[int] = []
        while heap:
            when, wid = heap[0]
            if live.get(wid) != when:  # ended otherwise: a dead entry
                heapq.heappop(heap)
            elif when <= now:
                heapq.heappop(heap)
                del live[wid]
                due.append(wid)
            else:
                self._arm(loop, when)
                break
        for wid in due:
            self._expire(wid)
