"""BATCHLIM and BATCHHB as IBM defines them, at a sending channel of a queue manager in
this process whose partner is a receiving end the test scripts over 127.0.0.1 (the
partner impersonated, frame by frame, with the protocol's own machine).

- BATCHLIM (kilobytes): a batch ends after the message that brings its data to the limit.
- BATCHHB (milliseconds): when nothing has come from the receiver for that long, the
  sender checks it is there with a heartbeat before the batch goes in doubt; a receiver
  that does not answer fails the session with the batch backed out, not in doubt.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from channel_nodes import Node, depth, put, start_node, stop_node, wait_until

from ferrymq.mq import cfc as F
from ferrymq.protocol import channel as P
from ferrymq.store.file import FileJournal

CHANNEL = "QM1.TO.QM2"


class ScriptedReceiver:
    """A receiving end that accepts the channel, confirms every batch, answers idle
    heartbeats, and answers a heartbeat that comes while a batch is open only when
    ``answers_in_batch``; ``frames`` is what the sender sent, in order."""

    def __init__(self, answers_in_batch: bool = True) -> None:
        self.answers_in_batch = answers_in_batch
        self.agree: Callable[[P.Hello], P.HelloAck] = lambda ev: P.HelloAck(0, "QM2", ev.batch_size,
                                                                          ev.max_msg_length, ev.heartbeat, 0)
        self.frames: list[P.Event] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = P.ChannelConnection(sender=False)
        in_batch = 0
        while data := await reader.read(65536):
            conn.receive_data(data)
            for ev in conn.events():
                self.frames.append(ev)
                if isinstance(ev, P.Hello):
                    conn.agreed(ev.max_msg_length)
                    writer.write(conn.send(self.agree(ev)))
                elif isinstance(ev, P.Message):
                    in_batch += 1
                elif isinstance(ev, P.Heartbeat) and (self.answers_in_batch or not in_batch):
                    writer.write(conn.send(P.Heartbeat(ack=True)))
                elif isinstance(ev, P.BatchEnd):
                    in_batch = 0
                    writer.write(conn.send(P.Confirm(ev.seq)))
        writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    def after_messages(self) -> list[str]:
        """The frames after the first MESSAGE: what ended the first batch, by kind."""
        kinds = [type(ev).__name__ for ev in self.frames]
        return kinds[kinds.index("Message"):] if "Message" in kinds else []


async def sender(tmp_path: Path, partner: ScriptedReceiver, attrs: str) -> Node:
    port = await partner.start()
    return await start_node("QM1", FileJournal(tmp_path / "qm1"), "DEFINE QLOCAL(QM2) USAGE(XMITQ)",
                            f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) "
                            f"HBINT(1) DISCINT(0) SHORTRTY(0) LONGRTY(0) NPMSPEED(NORMAL) {attrs}",
                            "DEFINE QREMOTE(TO.APP) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)")


@pytest.fixture
async def partner() -> AsyncIterator[ScriptedReceiver]:
    scripted = ScriptedReceiver()
    try:
        yield scripted
    finally:
        scripted.close()


def batch_ends(partner: ScriptedReceiver) -> list[int]:
    return [ev.count for ev in partner.frames if isinstance(ev, P.BatchEnd)]


@pytest.mark.parametrize(("limit", "batches"), [(1, [2, 2, 2, 2, 2]), (0, [10]), (2, [3, 3, 3, 1])])
async def test_batchlim_ends_a_batch_after_the_message_that_reaches_it(
        tmp_path: Path, partner: ScriptedReceiver, limit: int, batches: list[int]) -> None:
    # Each message is 728 bytes on the transmission queue (MQXQH 428 + 300): with
    # BATCHLIM(1) the second passes 1024 bytes, with BATCHLIM(2) the third passes 2048.
    node = await sender(tmp_path, partner, f"BATCHSZ(50) BATCHLIM({limit})")
    try:
        await put(node, 10, 0, at_once=True, size=300)
        await wait_until(lambda: sum(batch_ends(partner)) == 10 and depth(node, "QM2") == 0)
        assert batch_ends(partner) == batches
    finally:
        await stop_node(node)


@pytest.mark.parametrize(("batch_hb", "answers", "ending"), [
    (100, True, ["Heartbeat", "BatchEnd"]), (100, False, ["Heartbeat"]), (0, False, ["BatchEnd"])],
    ids=["answered", "unanswered", "off"])
async def test_batchhb_checks_the_receiver_before_the_batch_goes_in_doubt(
        tmp_path: Path, partner: ScriptedReceiver, batch_hb: int, answers: bool, ending: list[str]) -> None:
    # BATCHINT(300) keeps the batch open 300 ms after the HELLO_ACK, the receiver's last
    # word: longer than BATCHHB(100).
    partner.answers_in_batch = answers
    node = await sender(tmp_path, partner, f"BATCHSZ(10) BATCHINT(300) BATCHHB({batch_hb})")
    try:
        await put(node, 3, 0, at_once=True)
        rows = node.channels.control.channels
        await wait_until(lambda: "BatchEnd" in partner.after_messages() if "BatchEnd" in ending
                         else CHANNEL in rows and rows[CHANNEL].status == F.MQCHS_STOPPED)
        assert partner.after_messages() == ["Message"] * 3 + ending
        if answers or not batch_hb:
            await wait_until(lambda: depth(node, "QM2") == 0 and not node.qm.in_doubt)
        else:  # no answer within twice HBINT: the batch was never prepared, its messages are back
            assert not node.qm.in_doubt
            assert depth(node, "QM2") == 3
    finally:
        await stop_node(node)


@pytest.mark.parametrize("agreed", [(50, 0), (50, 4_194_305), (0, 4_194_304), (51, 4_194_304)],
                         ids=["MAXMSGL 0", "MAXMSGL above", "BATCHSZ 0", "BATCHSZ above"])
async def test_a_receiver_agreeing_more_than_asked_ends_the_session(
        tmp_path: Path, partner: ScriptedReceiver, agreed: tuple[int, int]) -> None:
    """The agreed BATCHSZ and MAXMSGL are the smaller of both ends': a HELLO_ACK with more
    (or 0) is a broken partner. The sender took them as they came: a MAXMSGL of 0
    dead-lettered every message as too big for the channel."""
    batch, length = agreed
    partner.agree = lambda ev: P.HelloAck(0, "QM2", batch, length, ev.heartbeat, 0)
    node = await sender(tmp_path, partner, "BATCHSZ(50) MAXMSGL(4194304)")
    try:
        await put(node, 3, 0)
        rows = node.channels.control.channels
        await wait_until(lambda: CHANNEL in rows and rows[CHANNEL].status == F.MQCHS_STOPPED)
        assert depth(node, "QM2") == 3 and not any(isinstance(ev, P.Message) for ev in partner.frames)
    finally:
        await stop_node(node)
