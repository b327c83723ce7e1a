"""Group commit: one fdatasync for every reply that waits on the disk.

The engine stages journal records and tells the driver, through ``take_sync_lsn()``,
which LSN a reply depends on. Replies are parked here until the journal's durable LSN
reaches theirs. One writer task takes everything appended so far
(``journal.take_pending()``), writes and syncs it in a worker thread, marks it durable
on the loop, releases the parked replies, and loops: whatever arrived while the sync ran
rides in the next one, so the sync rate, not the request rate, bounds the disk work.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ferrymq.store.journal import Journal

log = logging.getLogger("ferrymq.server")

Release = Callable[[], None]


class GroupCommitter:
    """Parks callbacks until an LSN is durable; drives the journal writer."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._parked: list[tuple[int, int, Release]] = []
        self._order = itertools.count()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ferrymq-fsync")
        self.failed: BaseException | None = None
        self.syncs = 0
        self.on_failure: Callable[[BaseException], None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="ferrymq-group-commit")

    def after(self, lsn: int, release: Release) -> None:
        """Run ``release`` once ``lsn`` is durable (at once if it already is)."""
        if lsn <= self.journal.durable_lsn:
            release()
            return
        heapq.heappush(self._parked, (lsn, next(self._order), release))
        self._wake.set()

    @property
    def parked(self) -> int:
        return len(self._parked)

    def kick(self) -> None:
        """Records were staged that nobody waits for (e.g. async puts): write them soon."""
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            while (pending := self.journal.take_pending()) is not None:
                try:
                    await loop.run_in_executor(self._executor, self.journal.write_pending, pending)
                except Exception as exc:
                    # A failed fsync leaves the outcome of every parked reply unknown: the
                    # server ends those conversations rather than acknowledge anything.
                    log.error("event=journal_write_failed lsn=%d error=%r", pending.lsn, exc)
                    self.failed = exc
                    if self.on_failure is not None:
                        self.on_failure(exc)
                    return
                self.journal.mark_durable(pending.lsn)
                self.syncs += 1
                self._release(self.journal.durable_lsn)
            self._release(self.journal.durable_lsn)

    def _release(self, durable: int) -> None:
        parked = self._parked
        while parked and parked[0][0] <= durable:
            _, _, release = heapq.heappop(parked)
            release()

    async def flush(self) -> None:
        """Write and sync everything staged so far, and release what waits on it."""
        loop = asyncio.get_running_loop()
        # Waits for the writer task by parking a marker behind everything staged.
        lsn = self.journal.appended_lsn
        if lsn <= self.journal.durable_lsn or self._task is None or self._task.done():
            return
        done: asyncio.Future[None] = loop.create_future()

        def release() -> None:
            if not done.done():
                done.set_result(None)

        self.after(lsn, release)
        await done

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            await self.flush()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._executor.shutdown(wait=True)
