"""Removing what Spark has committed, off the micro-batch's path.

The driver learns that a batch is committed in ``latestOffset`` (ferrymq.spark.streaming),
and Spark starts the next batch only when that returns: removing a 50,000-message batch
there cost the queue manager tens of milliseconds (hundreds on a loaded machine) in every
trigger, about a tenth of a steady micro-batch. The driver's reader hands removals to one
thread with connections of its own (a client is not shared between threads), which removes
up to the highest sequence asked for per queue. ``flush`` waits for it where no batch
follows (the source's ``latestOffset`` finding nothing new, which ends an availableNow run)
and ``close`` when the source stops, so a query that ends has removed what it committed. A failed removal is logged and dropped: removal is
idempotent and the next ``latestOffset`` (in this run or the next one) asks again.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from ferrymq.client import Client
from ferrymq.spark.connection import connect_for
from ferrymq.spark.options import FerryOptions

log = logging.getLogger("ferrymq.spark")

CLOSE_WAIT = 60.0  # seconds ``close`` waits for the removals asked for


class Remover:
    """One driver reader's removals: ``request`` returns at once, a thread removes."""

    def __init__(self, reader: str) -> None:
        self.reader = reader
        self._cond = threading.Condition()
        self._pending: dict[tuple[str, str, str, str], tuple[FerryOptions, str, int]] = {}
        self._asked: dict[tuple[str, str, str, str], int] = {}
        self._busy = False
        self._closing = False
        self._clients: dict[tuple[str, str, str], Client] = {}
        self._thread = threading.Thread(target=self._run, name="ferrymq-remover", daemon=True)
        self._thread.start()

    def request(self, opts: FerryOptions, queue: str, upto: int) -> None:
        """Remove ``queue``'s messages with ``seq <= upto`` (soon; nothing when asked already)."""
        key = (opts.queue_manager, opts.conn_name, opts.appl_name, queue)
        with self._cond:
            if upto <= self._asked.get(key, -1):
                return
            self._asked[key] = upto
            self._pending[key] = (opts, queue, upto)
            self._cond.notify_all()

    def flush(self, timeout: float = CLOSE_WAIT) -> bool:
        """Wait until every removal asked for is done (or failed); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self) -> None:
        if not self.flush():
            log.warning("event=removal_pending queues=%s (the next run removes them)", sorted(self._pending))
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(5.0)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._closing)
                if self._closing:
                    break
                work, self._pending, self._busy = self._pending, {}, True
            for key, (opts, queue, upto) in work.items():
                try:
                    self._client(opts).remove_upto(queue, upto, self.reader)
                except Exception as exc:  # idempotent: the next latestOffset asks again
                    log.warning("event=removal_failed queue=%s upto=%d error=%r", queue, upto, exc)
                    self._drop(opts)
                    with self._cond:
                        if self._asked.get(key) == upto:
                            del self._asked[key]
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        for c in self._clients.values():
            with contextlib.suppress(Exception):
                c.disconnect()

    def _client(self, opts: FerryOptions) -> Client:
        key = (opts.queue_manager, opts.conn_name, opts.appl_name)
        c = self._clients.get(key)
        if c is None:
            c = self._clients[key] = connect_for(opts)
        return c

    def _drop(self, opts: FerryOptions) -> None:
        c = self._clients.pop((opts.queue_manager, opts.conn_name, opts.appl_name), None)
        if c is not None:
            with contextlib.suppress(Exception):
                c.disconnect()
