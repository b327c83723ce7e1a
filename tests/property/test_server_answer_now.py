"""A waiting get handed a message by a put is answered at once (QueueManagerServer.answer_first,
from PutResult.delivered) instead of through the Delivery's usual way, a GetReply event and ``send``:
differentially, two servers take the same client streams (puts and gets of every kind, waits
answered and not, units of work, read-ahead, handles and connections closed, damaged frames),
one with the direct answer and one without. Every byte each client is sent, and the state
after (waits, deadlines, outstanding requests, depths), must be the same.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrymq.engine.api import FakeClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import ClientConnection
from ferrymq.server import QueueManagerServer
from ferrymq.server.handler import ClientHandler
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

CONNECTIONS = 3
IDS = [bytes(24), b"A" * 24, b"B" * 24]
OPEN = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE


class Transport:
    """What a handler needs of a transport; keeps what is written."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written += data

    def writelines(self, parts: list[bytes]) -> None:
        self.write(b"".join(parts))

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 0) if name == "peername" else default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


puts = st.builds(
    lambda persistent, expiry, msg_id, correl_id, coa, options, reply, props, data: E.Put(
        0, 0, MQMD(version=2, persistence=persistent, expiry=expiry, msg_id=msg_id, correl_id=correl_id,
                   report=C.MQRO_COA if coa else 0, reply_to_q="R", format="MQSTR"),
        data, options, 0, props, reply),
    st.sampled_from([C.MQPER_NOT_PERSISTENT] * 4 + [C.MQPER_PERSISTENT]),
    st.sampled_from([C.MQEI_UNLIMITED] * 4 + [100]),
    st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from([False] * 4 + [True]),
    st.sampled_from([C.MQPMO_NO_SYNCPOINT] * 3 + [C.MQPMO_SYNCPOINT, C.MQPMO_NO_SYNCPOINT | C.MQPMO_NEW_MSG_ID]),
    st.booleans(), st.sampled_from([None] * 5 + [{"p": 1}]), st.binary(max_size=40))
gets = st.builds(
    lambda options, wait, match, correl_id, buffer_length, handle: E.Get(
        0, 0, MQMD(version=2, correl_id=correl_id), options, wait, match, buffer_length, bytes(16), handle),
    st.sampled_from([C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT] * 4 + [
        C.MQGMO_WAIT | C.MQGMO_SYNCPOINT, C.MQGMO_NO_WAIT, C.MQGMO_WAIT | C.MQGMO_BROWSE_NEXT,
        C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_ACCEPT_TRUNCATED_MSG]),
    st.sampled_from([-1, 60_000]), st.sampled_from([C.MQMO_MATCH_CORREL_ID] + [C.MQMO_NONE] * 3),
    st.sampled_from(IDS), st.sampled_from([4 * 1024 * 1024] * 3 + [10]), st.booleans())
others = st.sampled_from([
    E.Commit(0), E.Backout(0), E.GetBatch(0, 0, C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, -1, 5), E.Consume(0, 0, 2),
    E.Credit(0, 1)] * 3 + [E.Close(0, 0), E.Disconnect(0)])
# One step in forty damaged: a byte of its frame changed (the connection then ends with a protocol error).
damages = st.one_of(*[st.none()] * 39, st.tuples(st.integers(0, 10_000), st.integers(0, 255)))
# A request/reply hop as a blocking client sends it: a put, then its get, in one read.
hops = st.tuples(puts, gets)
steps = st.lists(st.tuples(st.integers(0, CONNECTIONS - 1), st.one_of(puts, gets, gets, others, hops, hops),
                           st.booleans(), damages),
                 max_size=30)


def _numbered(ev: Any, corr: int, hobj: int) -> Any:
    """``ev`` with this correlation id and handle (where it has them)."""
    fields = {f: getattr(ev, f) for f in ev.__dataclass_fields__}
    if "corr" in fields:
        fields["corr"] = corr
    if "hobj" in fields:
        fields["hobj"] = hobj
    return type(ev)(**fields)


def _frames(plan: list[tuple[int, Any, bool, tuple[int, int] | None]], hobjs: list[int]) -> list[tuple[int, bytes]]:
    """The bytes each read delivers for the steps of ``plan`` (``hobjs``: each connection's
    handle): a step may share its read with the one before on the same connection, and
    some are damaged."""
    packer = ClientConnection()
    out: list[tuple[int, bytes]] = []
    for corr, (n, ev, join, damage) in enumerate(plan, start=10):
        evs = ev if isinstance(ev, tuple) else (ev,)
        raw = bytearray(b"".join(packer._pack(_numbered(e, 2 * corr + i, hobjs[n])) for i, e in enumerate(evs)))
        if damage is not None:
            at, value = damage
            raw[at % len(raw)] = value
        if join and out and out[-1][0] == n:
            out[-1] = (n, out[-1][1] + bytes(raw))
        else:
            out.append((n, bytes(raw)))
    return out


async def _serve(plan: list[tuple[int, Any, bool, tuple[int, int] | None]], direct: bool) -> tuple[object, ...]:
    qm = QueueManager.start("QM1", MemoryJournal(), FakeClock())
    qm.objects.define("QLOCAL", "Q", {"MAXDEPTH": 1000})
    qm.objects.define("QLOCAL", "R", {})  # where reports go
    server = QueueManagerServer(qm, "127.0.0.1", 0)
    await server.start(listen=False)
    if not direct:  # every answer takes the Delivery's way
        server.answer_first = lambda d: False  # type: ignore[method-assign]
    handlers, transports = [], []
    packer = ClientConnection()
    for _ in range(CONNECTIONS):  # connected, and the queue opened
        h, t = ClientHandler(server), Transport()
        h.connection_made(t)  # type: ignore[arg-type]
        h.data_received(packer._pack(E.Connect(1, "QM1", "t", "u")) + packer._pack(E.Open(2, "Q", OPEN)))
        handlers.append(h)
        transports.append(t)
    hobjs = [next(iter(qm.connections[h.hconn].handles)) for h in handlers]
    for n, data in _frames(plan, hobjs):
        if not handlers[n].closed:
            handlers[n].data_received(data)
        await server.committer.flush()
    state = (sorted(server.waiters), len(server.deadlines), sorted(qm.waiters), len(qm.objects.require("Q").messages),
             [(h.closed, dict(h.conn._outstanding), h.out_bytes) for h in handlers])
    written = [bytes(t.written) for t in transports]
    for h in handlers:
        h.connection_lost(None)
    await server.stop(quiesce=False)
    return tuple(written), state


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_a_waiting_get_answered_at_once_gets_what_a_delivery_gives(plan: list[Any]) -> None:
    assert asyncio.run(_serve(plan, True)) == asyncio.run(_serve(plan, False))


def test_the_answer_is_written_at_once_and_makes_no_delivery() -> None:
    """A request/reply hop: the put's read answers the other connection's wait directly."""
    plan = [(0, E.Get(0, 0, MQMD(version=2), C.MQGMO_WAIT, -1, C.MQMO_NONE), False, None),
            (1, E.Put(0, 0, MQMD(version=2), b"hello", C.MQPMO_NO_SYNCPOINT, 0, None, False), False, None)]
    calls: list[bool] = []
    original = QueueManagerServer.answer_first

    def spy(self: QueueManagerServer, *args: Any) -> bool:
        answered = original(self, *args)
        calls.append(answered)
        return answered

    QueueManagerServer.answer_first = spy  # type: ignore[method-assign]
    try:
        written, _ = asyncio.run(_serve(plan, True))
    finally:
        QueueManagerServer.answer_first = original  # type: ignore[method-assign]
    assert calls == [True]
    assert b"hello" in written[0]  # type: ignore[index]
