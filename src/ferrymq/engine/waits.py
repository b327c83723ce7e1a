"""Waiting gets: waking them in the order they began when messages become available, and
ending them (answered, timed out, cancelled).

A wait is registered by MQGET (messaging.get) and answered through ``deliveries``, which
the driver takes after each call (``take_deliveries``); the driver owns the timeout.
"""

from __future__ import annotations

from ferrymq.engine.api import Delivery, GetOptions, GetResult
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.reports import Reports
from ferrymq.engine.session import Connection, Handle
from ferrymq.engine.state import Waiter
from ferrymq.errors import MQError
from ferrymq.wire.mqmd import MQMD


class Waits(Reports):
    """wake and the end of waits; mixed into Messaging."""

    def attempt(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions,
                buffer_length: int) -> GetResult | None:  # pragma: no cover - Messaging's
        raise NotImplementedError

    def check_get_allowed(self, h: Handle) -> None:  # pragma: no cover - Messaging's
        raise NotImplementedError

    def wake(self, q: QueueObject) -> None:
        """Give newly available messages to waiting gets, in the order they started waiting.

        A wake asked for while the queue's waits are being served (a locked browse letting
        go of the message it held) runs after that pass, not inside it: the wait being
        answered is still registered until its answer is made, and would be served again."""
        ids = self.queue_waiters.get(q.name)
        if not ids or not len(q.messages):
            return
        if q.name in self._waking:
            self._waking[q.name] = True
            return
        self._waking[q.name] = False
        try:
            while True:
                self._wake_pass(q, ids)
                if not self._waking[q.name]:
                    break
                self._waking[q.name] = False
                ids = self.queue_waiters.get(q.name, [])
        finally:
            del self._waking[q.name]

    def _wake_pass(self, q: QueueObject, ids: list[int]) -> None:
        for wid in list(ids):
            if not len(q.messages):
                break
            w = self.waiters.get(wid)
            if w is None:
                continue
            conn = self.connections.get(w.hconn)
            h = conn.handles.get(w.hobj) if conn is not None else None
            if conn is None or h is None:
                self.end_wait(wid)
                continue
            # The waiter's own durability is separate from the call that woke it.
            outer, self._sync_lsn = self._sync_lsn, 0
            try:
                self.check_get_allowed(h)
                found = self.attempt(conn, h, w.md, w.gmo, w.buffer_length)
            except MQError as exc:
                found = None
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, None, exc))
            lsn, self._sync_lsn = self._sync_lsn, max(outer, self._sync_lsn)
            if found is not None:
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, found, None, lsn))

    def end_wait(self, waiter_id: int) -> Waiter | None:
        w = self.waiters.pop(waiter_id, None)
        if w is None:
            return None
        ids = self.queue_waiters.get(w.queue)
        if ids is not None:
            ids.remove(waiter_id)
            if not ids:
                del self.queue_waiters[w.queue]
        conn = self.connections.get(w.hconn)
        if conn is not None:
            conn.waiters.discard(waiter_id)
        return w

    def cancel_wait(self, waiter_id: int) -> bool:
        """The driver's timer ran out: True if the get was still waiting (answer 2033)."""
        return self.end_wait(waiter_id) is not None

    def take_deliveries(self) -> list[Delivery]:
        out, self.deliveries = self.deliveries, []
        return out
