"""Group commit: one fdatasync for every reply that waits on the disk, and the journal's
health as the server sees it.

The engine stages journal records and tells the driver, through ``take_sync_lsn()``,
which LSN a reply depends on. Replies are parked here until the journal's durable LSN
reaches theirs. One writer task takes everything appended so far
(``journal.take_pending()``), writes and syncs it in a worker thread, marks it durable
on the loop, releases the parked replies, and loops: whatever arrived while the sync ran
rides in the next one, so the sync rate, not the request rate, bounds the disk work.

Gathering: on a slow disk, committers that take turns would each get a sync of their own.
Two programs committing in a loop (a producer's units of puts, a consumer's units of gets)
fall into step: each commits while the other's sync runs, so every sync carries one unit
and each waits for two. So before a sync that someone waits on, the writer waits for the
connections the last sync released (``after``'s ``who``) that have not come back yet, at
most half the recent sync time (``GATHER_SHARE``, capped at ``GATHER_MAX``): when they
commit again meanwhile, both ride one sync. A wait that catches nobody turns gathering off
for the next sync, two after a second miss in a row, and so on up to ``GATHER_REST``; a
connection that went idle costs at most one delay (it is released once). A lone
committer is never delayed (nobody else was released), nor one whose released peers are
already waiting again.

A full disk (store/space.py) is survived: a batch that found no space (JournalFull) is
kept and written again every ``RETRY_FIRST``..``RETRY_MAX`` seconds; the replies parked
on it wait (they were not acknowledged, and the engine already holds their effects, so
they can only succeed once on disk). Meanwhile the journal's ``refusal`` makes the engine
refuse new persistent messages, and while it is set with nothing to write the free space
is measured again at the same pace, so the refusal lifts without a restart once space is
freed. Any other write failure is final: the replies parked then, and any parked later,
end their connections (their outcome is unknown to us: MQRC_CONNECTION_BROKEN), and the
engine refuses persistent messages for the rest of the process's life. Every change of
state is logged once, with the free-space figures, and passed to ``on_health``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ferrymq.errors import JournalFull
from ferrymq.server.metrics import BATCH_BUCKETS, FSYNC_BUCKETS, Histogram
from ferrymq.store.journal import Journal, Pending

log = logging.getLogger("ferrymq.server")

Release = Callable[[], None]

RETRY_FIRST = 0.25
RETRY_MAX = 1.0
"""Seconds between tries while the disk is full or below its reserve (doubling up to this)."""
GATHER_SHARE = 0.5
"""A gathering wait lasts at most this share of the recent sync time (write and fdatasync)."""
GATHER_MAX = 0.01
"""Seconds: the longest gathering wait, however slow the disk."""
GATHER_REST = 16
"""Most syncs without gathering after waits that caught nobody (1, 2, 4 ... in a row)."""
STOP_GRACE = 5.0
"""Seconds ``stop`` waits for a batch that does not fit before it gives up on it."""


class GroupCommitter:
    """Parks callbacks until an LSN is durable; drives the journal writer."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._parked: list[tuple[int, int, Release, object]] = []
        self._waiting: dict[object, int] = {}  # who has replies parked, and how many
        self._released: set[object] = set()  # who the last sync released (gathering)
        self._awaited: set[object] = set()  # who a gathering wait waits for
        self._gathered: asyncio.Future[None] | None = None  # resolved when they all came
        self._sync_time = 0.0  # recent seconds per sync (moving average), for the gathering wait
        self._rest = 0  # syncs left without gathering
        self._misses = 0  # gathering waits in a row that caught nobody
        self.gathers = 0  # gathering waits that caught someone (monitoring, tests)
        self.gather_misses = 0  # and those that caught nobody
        self._order = itertools.count()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._disk = DiskThread()
        self.failed: BaseException | None = None
        self.syncs = 0
        # What each group commit cost (write and fdatasync) and carried: the metrics endpoint's.
        self.sync_seconds = Histogram(FSYNC_BUCKETS)
        self.batch_bytes = Histogram(BATCH_BUCKETS)
        self.on_failure: Callable[[BaseException], None] | None = None
        self.on_health: Callable[[dict[str, Any]], None] | None = None
        self._retry: Pending | None = None  # the batch that found no space, written again first
        self._seen_refusal = ""
        self._state = "healthy"
        self._since = time.time()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="ferrymq-group-commit")

    def after(self, lsn: int, release: Release, who: object = None) -> None:
        """Run ``release`` once ``lsn`` is durable (at once if it already is). ``who`` (a
        connection) lets the writer gather its next commit with others' (module docstring)."""
        if lsn <= self.journal.durable_lsn:
            release()
            return
        heapq.heappush(self._parked, (lsn, next(self._order), release, who))
        if who is not None:
            waiting = self._waiting
            waiting[who] = waiting.get(who, 0) + 1
            awaited = self._awaited
            if who in awaited:
                awaited.discard(who)
                if not awaited and self._gathered is not None:
                    _resolve(self._gathered)
        if self.failed is not None:  # it will never be durable: end its connection, as the others'
            asyncio.get_running_loop().call_soon(self._fail_parked, self.failed)
            return
        self._wake.set()

    @property
    def parked(self) -> int:
        return len(self._parked)

    def kick(self) -> None:
        """Records were staged that nobody waits for (e.g. async puts): write them soon."""
        self._wake.set()

    # -- health --------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """The journal's state (store/space.py), since when, the disk's free space and why."""
        st = self.journal.stats()
        return {"state": self._state, "since": datetime.fromtimestamp(self._since, UTC).isoformat(timespec="seconds"),
                "free_bytes": st.free_bytes, "reserve_bytes": st.reserve_bytes, "detail": self.journal.refusal,
                "parked": len(self._parked)}

    def _note_health(self) -> None:
        """Log and report a change of the journal's state (cheap when the refusal is unchanged)."""
        refusal = self.journal.refusal
        if refusal is self._seen_refusal:
            return
        self._seen_refusal = refusal
        st = self.journal.stats()
        if st.state == self._state:
            return
        previous, self._state, self._since = self._state, st.state, time.time()
        level = logging.INFO if st.state == "healthy" else logging.ERROR if st.state == "failed" else logging.WARNING
        log.log(level, "event=journal_state state=%s previous=%s free_bytes=%d reserve_bytes=%d parked=%d detail=%r",
                st.state, previous, st.free_bytes, st.reserve_bytes, len(self._parked), refusal)
        if self.on_health is not None:
            try:
                self.on_health(self.health())
            except Exception:  # reporting must not stop the writer
                log.exception("event=journal_health_report_failed")

    # -- the writer ----------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        delay = RETRY_FIRST
        while True:
            if self._retry is not None:
                await asyncio.sleep(delay)  # new work cannot go before the batch that waits
            elif self.journal.refusal:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
            else:
                await self._wake.wait()
            self._wake.clear()
            try:
                wrote = await self._write_all(loop)
            except Exception as exc:
                self._fail(exc)
                return
            if self.journal.refusal and not wrote and self._retry is None:
                # Below the reserve with nothing to write: has space been freed?
                await self._disk.call(loop, self.journal.check_space)
                self.journal.refresh()
                self._note_health()
            delay = min(delay * 2, RETRY_MAX) if self.journal.refusal else RETRY_FIRST

    async def _write_all(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Write until nothing is pending; False when nothing could be written."""
        wrote = False
        while True:
            if self._released and self._parked and self._retry is None:
                await self._gather(loop, self._released)
            pending = self._retry or self.journal.take_pending()
            if pending is None:
                break
            self._released = set()  # from now: who this sync releases
            began = time.perf_counter()
            try:
                await self._disk.call(loop, self.journal.write_pending, pending)
            except JournalFull as exc:
                if self._retry is None:
                    log.warning("event=journal_write_no_space lsn=%d bytes=%d error=%s", pending.lsn,
                                len(pending.data), exc)
                self._retry = pending
                self.journal.refresh()
                self._note_health()
                return wrote
            self._retry = None
            wrote = True
            took = time.perf_counter() - began
            self._sync_time += (took - self._sync_time) / 8 if self._sync_time else took
            self.sync_seconds.observe(took)
            self.batch_bytes.observe(len(pending.data))
            self.journal.mark_durable(pending.lsn)
            self.syncs += 1
            self._release(self.journal.durable_lsn)
            self._note_health()
        self._release(self.journal.durable_lsn)
        return wrote

    async def _gather(self, loop: asyncio.AbstractEventLoop, released: set[object]) -> None:
        """Before a sync someone waits on: wait a little for the connections the last sync
        released to commit again, so they ride this sync too (module docstring)."""
        if self._rest:
            self._rest -= 1
            return
        awaited = {who for who in released if who not in self._waiting}
        delay = min(self._sync_time * GATHER_SHARE, GATHER_MAX)
        if not awaited or delay <= 0:
            return
        self._awaited, expected = awaited, len(awaited)
        gathered = self._gathered = loop.create_future()
        timer = loop.call_later(delay, _resolve, gathered)
        try:
            await gathered
        finally:
            timer.cancel()
            self._gathered = None
        if len(awaited) == expected:  # nobody came: gathering may not pay now
            self._rest = min(1 << self._misses, GATHER_REST)
            self._misses += 1
            self.gather_misses += 1
        else:
            self._misses = 0
            self.gathers += 1
        self._awaited = set()

    def _fail(self, exc: BaseException) -> None:
        # A failed fsync leaves the outcome of every parked reply unknown: the server ends
        # those conversations rather than acknowledge anything.
        log.error("event=journal_write_failed lsn=%d error=%r", self.journal.appended_lsn, exc)
        self.failed = exc
        self._retry = None
        self.journal.refresh()
        self._note_health()
        self._fail_parked(exc)

    def _fail_parked(self, exc: BaseException) -> None:
        if not self._parked:
            return
        if self.on_failure is not None:
            self.on_failure(exc)
        self._parked.clear()
        self._waiting.clear()

    def _release(self, durable: int) -> None:
        parked, waiting, released = self._parked, self._waiting, self._released
        while parked and parked[0][0] <= durable:
            _, _, release, who = heapq.heappop(parked)
            if who is not None:
                released.add(who)
                left = waiting[who] - 1
                if left:
                    waiting[who] = left
                else:
                    del waiting[who]
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
            flushing = asyncio.ensure_future(self.flush())
            while True:
                finished, _ = await asyncio.wait({flushing}, timeout=STOP_GRACE)
                if finished or self._retry is None:
                    if finished:
                        break
                    continue  # a slow disk, not a full one: keep waiting
                log.error("event=journal_unwritten_at_stop lsn=%d durable_lsn=%d detail=%r",
                          self.journal.appended_lsn, self.journal.durable_lsn, self.journal.refusal)
                flushing.cancel()
                break
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._disk.shutdown()


class DiskThread:
    """One thread for the journal's blocking calls (write and fdatasync, measuring space).

    Each call is a tuple on a queue and one ``call_soon_threadsafe`` back, where a
    ThreadPoolExecutor through ``run_in_executor`` also makes a concurrent Future (with its
    Condition), a work item, a semaphore round and a chained asyncio Future per call: on a
    commit's path, once per sync. Started at the first call; ``shutdown`` lets it finish
    what it was given and joins it.
    """

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any],
                                             Callable[..., Any], tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def call(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """``fn(*args)`` in the thread; the future has its result or exception."""
        future: asyncio.Future[Any] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="ferrymq-fsync", daemon=True)
            self._thread.start()
        self._calls.put((loop, future, fn, args))
        return future

    def _serve(self) -> None:
        calls = self._calls
        while (item := calls.get()) is not None:
            loop, future, fn, args = item
            try:
                outcome: tuple[Any, BaseException | None] = (fn(*args), None)
            except BaseException as exc:  # handed to the awaiting task, as an executor would
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
                loop.call_soon_threadsafe(_settle, future, *outcome)
            del item, loop, future, fn, args, outcome  # nothing kept while waiting for the next call

    def shutdown(self) -> None:
        """Finish the calls given, then end the thread."""
        if self._thread is not None:
            self._calls.put(None)
            self._thread.join()
            self._thread = None


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the awaiting task was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
