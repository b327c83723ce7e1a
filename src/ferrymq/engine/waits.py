"""Waiting gets and the answers made for them (deliveries).

Owns the registry of MQGMO_WAIT gets (``waiters``, and per queue the order they began),
``wake``, which offers newly available messages to them in that order, the end of a wait
(answered, timed out, cancelled, ended by quiesce), and ``deliveries``: the answers made
during a call, which the driver takes after it (``take_deliveries``). The driver owns the
timeout (``cancel_wait``).

A wait is answered with what the get path's ``attempt`` finds: it is bound once at
composition (``serve_with``), so this module knows nothing of how a get searches.
"""

from __future__ import annotations

from collections.abc import Callable

from ferrymq.engine.api import Delivery, GetOptions, GetResult, Waiting
from ferrymq.engine.objects import QueueObject
from ferrymq.engine.session import Connection, Handle, Waiter
from ferrymq.engine.state import EngineState
from ferrymq.errors import MQError, failed
from ferrymq.mq import constants as C
from ferrymq.wire.mqmd import MQMD, NONE_ID

Attempt = Callable[[Connection, Handle, MQMD, GetOptions, int], GetResult | None]
"""Find and take (or browse) a message for a get now; None when nothing matches."""


_MATCH_MSG_ID, _MATCH_CORREL_ID = C.MQMO_MATCH_MSG_ID, C.MQMO_MATCH_CORREL_ID
_SYNCPOINT, _SAVE_ALL_CONTEXT = C.MQGMO_SYNCPOINT, C.MQOO_SAVE_ALL_CONTEXT
# Get options under which a wait's attempt may do more than take the first match.
_NOT_PLAIN = (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT | C.MQGMO_BROWSE_MSG_UNDER_CURSOR | C.MQGMO_MSG_UNDER_CURSOR
              | C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT | C.MQGMO_CONVERT)
# Match options that compare what only the full descriptor or the queue's own index knows.
_RARE_MATCH = C.MQMO_MATCH_GROUP_ID | C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET | C.MQMO_MATCH_MSG_TOKEN


def _matches_rarely(mo: int, md: MQMD, token: bytes) -> bool:
    """Whether a match option beyond MsgId and CorrelId is in force (search would use it)."""
    return bool((mo & C.MQMO_MATCH_GROUP_ID and md.group_id != NONE_ID)
                or mo & (C.MQMO_MATCH_MSG_SEQ_NUMBER | C.MQMO_MATCH_OFFSET)
                or (mo & C.MQMO_MATCH_MSG_TOKEN and token != bytes(16)))


def _unbound(*_: object) -> None:  # pragma: no cover - replaced by serve_with at composition
    raise RuntimeError("Waits used before serve_with")


class Waits:
    """The waits of one queue manager and the answers made for them."""

    def __init__(self, state: EngineState) -> None:
        self.state = state
        self.connections = state.connections
        self.clock = state.clock
        self.staging = state.staging
        self.waiters: dict[int, Waiter] = {}
        self.queue_waiters: dict[str, list[int]] = {}
        self.deliveries: list[Delivery] = []
        self._waking: dict[str, bool] = {}  # queues whose waits wake() is serving: asked again meanwhile?
        self._next_waiter = 1
        self._attempt: Attempt = _unbound
        self._check_get_allowed: Callable[[Handle], None] = _unbound

    def serve_with(self, attempt: Attempt, check_get_allowed: Callable[[Handle], None]) -> None:
        """Bind the get path's search-and-take and its GET(DISABLED) check (engine.getting)."""
        self._attempt, self._check_get_allowed = attempt, check_get_allowed

    def register(self, conn: Connection, h: Handle, md: MQMD, gmo: GetOptions, buffer_length: int,
                 queue: str) -> Waiting:
        """A get that found nothing waits on ``queue``, after those already waiting there."""
        wid = self._next_waiter
        self._next_waiter = wid + 1
        mo, opts = gmo.match_options, gmo.options
        msg_id = md.msg_id if mo & _MATCH_MSG_ID else NONE_ID
        correl_id = md.correl_id if mo & _MATCH_CORREL_ID else NONE_ID
        plain = not (opts & _NOT_PLAIN or (mo & _RARE_MATCH and _matches_rarely(mo, md, gmo.msg_token))
                     or h.selection is not None)
        bare = not (opts & _SYNCPOINT or h.options & _SAVE_ALL_CONTEXT)
        # (all positional: a class called with keywords is called through a dict of them)
        self.waiters[wid] = Waiter(wid, md, gmo, buffer_length, queue, conn, h,
                                   None if msg_id == NONE_ID else msg_id, None if correl_id == NONE_ID else correl_id,
                                   1, 0, plain, bare)
        ids = self.queue_waiters.get(queue)
        if ids is None:
            self.queue_waiters[queue] = [wid]
        else:
            ids.append(wid)
        conn.waiters.add(wid)
        wait = gmo.wait_interval
        return Waiting(wid, None if wait == C.MQWI_UNLIMITED else self.clock.now() + wait / 1000.0)

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
        staging = self.staging
        for wid in list(ids):
            if not len(q.messages):
                break
            w = self.waiters.get(wid)
            if w is None:
                continue
            conn, h = w.conn, w.handle
            outer = staging.apart()  # the waiter's own durability is separate from the call that woke it
            try:
                self._check_get_allowed(h)
                found = self._attempt(conn, h, w.md, w.gmo, w.buffer_length)
            except MQError as exc:
                found = None
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, None, exc))
            lsn = staging.rejoin(outer)
            if found is not None:
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, found, None, lsn))

    def end_wait(self, waiter_id: int) -> Waiter | None:
        w = self.waiters.get(waiter_id)
        if w is not None:
            self.ended(w)
        return w

    def ended(self, w: Waiter) -> None:
        """``end_wait`` for a wait its caller holds (a hand-over has it at hand)."""
        waiter_id = w.waiter_id
        del self.waiters[waiter_id]
        queue_waiters = self.queue_waiters
        ids = queue_waiters.get(w.queue)
        if ids is not None:
            ids.remove(waiter_id)
            if not ids:
                del queue_waiters[w.queue]
        w.conn.waiters.discard(waiter_id)

    def end_handle_waits(self, hobj: int) -> None:
        """The handle closes: its waits end unanswered."""
        for wid in [w.waiter_id for w in self.waiters.values() if w.handle.hobj == hobj]:
            self.end_wait(wid)

    def cancel_wait(self, waiter_id: int) -> bool:
        """The driver's timer ran out: True if the get was still waiting (answer 2033)."""
        return self.end_wait(waiter_id) is not None

    def quiesce(self, qmgr_name: str) -> None:
        """Waits that asked MQGMO_FAIL_IF_QUIESCING end with MQRC_Q_MGR_QUIESCING."""
        for wid, w in list(self.waiters.items()):
            if w.gmo.options & C.MQGMO_FAIL_IF_QUIESCING:
                self.end_wait(wid)
                self.deliveries.append(Delivery(wid, None, failed(C.MQRC_Q_MGR_QUIESCING,
                                                                  f"queue manager {qmgr_name} is quiescing")))

    def answered(self, d: Delivery) -> None:
        """The driver wrote ``d`` itself (PutResult.delivered): it is no longer to take."""
        deliveries = self.deliveries
        if deliveries and deliveries[0] is d:
            del deliveries[0]
        elif d in deliveries:
            deliveries.remove(d)

    def take_deliveries(self) -> list[Delivery]:
        # The same list stays: collaborators and the facade bind it once.
        out = self.deliveries[:]
        self.deliveries.clear()
        return out
