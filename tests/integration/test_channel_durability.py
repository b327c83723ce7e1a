"""A receiver reports a batch as committed only once its commit is on disk, also to a
sender that resynchronises (issue 19, docs/distributed.md "Once and once only").

Two queue managers in this process, each with its server and channel initiator, joined by
a sender/receiver pair over 127.0.0.1; the receiving one's file journal can hold its
writes (and their fdatasync) back, so the window between a commit and its sync is as long
as the test needs, and nothing depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from channel_nodes import Node, curdepth, depth, put, start_node, stop_node, wait_until

import ferrymq.client as fc
from ferrymq.engine.chlcontrol import batches_in_doubt
from ferrymq.store.file import FileJournal
from ferrymq.store.journal import Pending

CHANNEL = "QM1.TO.QM2"


class HeldJournal(FileJournal):
    """A file journal whose writes wait while ``open`` is clear: what the engine commits
    meanwhile is staged, not durable (as during a long fdatasync)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.open = threading.Event()
        self.open.set()

    def write_pending(self, pending: Pending) -> None:
        self.open.wait()
        super().write_pending(pending)


@pytest.fixture
async def pair(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Node, Node, HeldJournal]]:
    """QM1 -> QM2; ``request.param``, when given: the PipeLineLength of QM1 and of QM2."""
    sending, receiving = getattr(request, "param", (1, 1))
    held = HeldJournal(tmp_path / "qm2")
    # HBINT(1) at both ends: the sender gives up on a CONFIRM after 2 s and comes back at once.
    qm2 = await start_node("QM2", held, "DEFINE LISTENER(CHL.LISTENER) TRPTYPE(TCP) PORT(0) CONTROL(QMGR)",
                           f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(RCVR) HBINT(1)", "DEFINE QLOCAL(APP.IN)",
                           pipeline_length=receiving)
    port = qm2.qm.state.channel_control.listeners["CHL.LISTENER"].port
    qm1 = await start_node("QM1", FileJournal(tmp_path / "qm1"), "DEFINE QLOCAL(QM2) USAGE(XMITQ)",
                           f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) "
                           "BATCHSZ(10) HBINT(1) DISCINT(0) SHORTRTY(1000) SHORTTMR(0) NPMSPEED(NORMAL)",
                           "DEFINE QREMOTE(TO.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)", pipeline_length=sending)
    try:
        yield qm1, qm2, held
    finally:
        held.open.set()
        for node in (qm1, qm2):
            await stop_node(node)


async def test_resync_answers_committed_only_once_the_receivers_commit_is_durable(
        pair: tuple[Node, Node, HeldJournal]) -> None:
    qm1, qm2, held = pair
    await put(qm1, 10, 0)
    await wait_until(lambda: depth(qm2, "APP.IN") == 10 and not qm1.qm.in_doubt)
    first = qm2.channels.receivers[CHANNEL]

    held.open.clear()  # QM2's next commit stays off the disk until the test says
    await put(qm1, 10, 10)
    # QM2 committed a batch (its messages are visible there) but cannot CONFIRM it; the
    # sender keeps it in doubt, gives up after twice HBINT and resynchronises.
    await wait_until(lambda: depth(qm2, "APP.IN") > 10)
    doubt = set(qm1.qm.in_doubt)
    assert doubt
    await wait_until(lambda: qm2.channels.receivers.get(CHANNEL) not in (None, first))
    # The HELLO naming the batch in doubt has arrived. Until QM2's commit is durable its
    # answer must not say "committed": QM1 would delete its copy, and a crash of QM2 now
    # would lose the batch at both ends.
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        assert set(qm1.qm.in_doubt) == doubt, "the sender resolved its batch before the receiver's commit was durable"
        assert curdepth(qm1, "QM2") == 10  # the batch's copy (got under its prepared unit) and the rest
        await asyncio.sleep(0.01)

    held.open.set()
    await wait_until(lambda: not qm1.qm.in_doubt)
    await put(qm1, 5, 20)
    await wait_until(lambda: depth(qm2, "APP.IN") == 25 and depth(qm1, "QM2") == 0 and not qm1.qm.in_doubt)
    assert sorted(await received(qm2, 25)) == list(range(25))


async def received(node: Node, count: int) -> list[int]:
    async with await fc.connect_async(node.qm.name, f"127.0.0.1({node.server.port})") as c:
        q = await c.open("APP.IN")
        return [int.from_bytes((await q.get()).data, "big") for _ in range(count)]


@pytest.mark.parametrize(("pair", "out"), [((2, 2), 2), ((2, 1), 1), ((1, 2), 1), ((5, 9), 2)],
                         indirect=["pair"], ids=["both", "receiver-off", "sender-off", "above-2-is-2"])
async def test_a_pipelining_sender_sends_the_next_batch_before_the_confirm(
        pair: tuple[Node, Node, HeldJournal], out: int) -> None:
    """PipeLineLength above 1 at both ends: with QM2's disk held, QM1 has sent and prepared
    a second batch while the first waits for its CONFIRM (two in doubt), and QM2 has put
    and committed it while the first commit is still unwritten; else one. Pipelining, the
    third batch's messages follow too, put at QM2 in its open unit, but not its BATCH_END
    (never three in doubt). Given back the disk, the sender resolves both from the
    receiver's last sequence number (after its reconnection, as HBINT(1) gives up on a
    CONFIRM after 2 s): all arrive, once."""
    qm1, qm2, held = pair
    await put(qm1, 10, 0)
    await wait_until(lambda: depth(qm2, "APP.IN") == 10 and not qm1.qm.in_doubt)
    held.open.clear()
    await put(qm1, 30, 10, at_once=True)
    ahead = 10 if out == 2 else 0  # the third batch's messages, put and not committed
    await wait_until(lambda: depth(qm2, "APP.IN") == 10 + 10 * out and curdepth(qm2, "APP.IN") == 10 + 10 * out + ahead)
    assert len(batches_in_doubt(qm1.qm.in_doubt, CHANNEL, 999_999_999)) == out
    await asyncio.sleep(0.3)  # no third BATCH_END: at most two are in doubt
    assert depth(qm2, "APP.IN") == 10 + 10 * out
    assert curdepth(qm2, "APP.IN") == 10 + 10 * out + ahead
    assert len(batches_in_doubt(qm1.qm.in_doubt, CHANNEL, 999_999_999)) == out
    held.open.set()
    await wait_until(lambda: depth(qm2, "APP.IN") == 40 and depth(qm1, "QM2") == 0 and not qm1.qm.in_doubt)
    assert sorted(await received(qm2, 40)) == list(range(40))
