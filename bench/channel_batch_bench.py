"""One end of a message channel in this process, the other end replayed: the receiving or
the sending agent's per-batch path, for counting instructions with callgrind and CPU
time per message without the partner queue manager's work (issue 19).

``--side receiver``: QM2 (its server, group committer, channel listener and a RCVR
channel, FileJournal in a scratch directory) receives ``--batches`` batches of ``--batch``
persistent messages of ``--size`` bytes to APP.IN, pipelined (the next batch is sent
before the last one's CONFIRM, two at most out): the frames are the bytes QM1's sender
writes (an MQXQH and MQMD made by QM1's engine for a QREMOTE), encoded once and replayed.

``--side receiver-engine``: the receiving agent's calls per batch alone (no event loop, no
sockets, the journal written in this thread): the engine's share.

``--side sender``: QM1 (server, committer, a SDR channel) holds the messages on its
transmission queue, put before the channel starts; a replayed receiver in this process
answers HELLO_ACK and each BATCH_END's CONFIRM at once, reading frame headers only.
``--preload-only`` puts the messages and stops: its instructions, subtracted, leave the
channel's own.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        python bench/channel_batch_bench.py --side receiver --batches B

Run it at two batch counts and divide the difference of the totals by the difference of
the message counts: the cost per message, start-up excluded. Without valgrind it prints
the process's CPU µs per message over the transfer alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import shutil
import struct
import tempfile
import time
from pathlib import Path

from ferrymq.admin.session import Session
from ferrymq.channels import initiator
from ferrymq.channels.host import EngineHost
from ferrymq.channels.initiator import ChannelInitiator
from ferrymq.channels.receiver import ReceiverAgent
from ferrymq.engine.api import GetOptions, ObjectDescriptor, PutOptions, SystemClock
from ferrymq.engine.commands.pcfmap import run as run_command
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import channel as P
from ferrymq.server import QueueManagerServer
from ferrymq.server.gc_policy import FreezeSurvivors
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD

CHANNEL = "QM1.TO.QM2"
PROFILE = cProfile.Profile()  # enabled over the transfer alone with --profile (PROFILING)
PROFILING = False
_HEAD = struct.Struct(">4sB3xI")


def mqsc(qm: QueueManager, *commands: str) -> None:
    session = Session(lambda cmd: run_command(qm, cmd))
    for text in commands:
        res = session.execute(text)
        assert res.ok, res.messages


async def start(name: str, home: Path, *defs: str) -> tuple[QueueManager, QueueManagerServer, ChannelInitiator]:
    qm = QueueManager.start(name, FileJournal(home / name), SystemClock())
    FreezeSurvivors().install()  # as `ferrymq start` does
    # No housekeeping by the clock (the server's tick, the initiator's look at its requests
    # and triggers): under valgrind a run lasts minutes, and work that comes with time, not
    # with messages, would blur the counts. The sender is started by a direct call.
    initiator.POLL = 3600
    server = QueueManagerServer(qm, "127.0.0.1", 0, tick_interval=3600)
    await server.start(listen=False)
    channels = ChannelInitiator(EngineHost(qm, server.committer.after, server.agent_done, wait=server.agent_wait),
                                may_listen=lambda host: host == "127.0.0.1", pipeline_length=2)
    mqsc(qm, *defs)
    await channels.start()
    return qm, server, channels


def xmit_messages(count: int, size: int) -> list[bytes]:
    """Transmission-queue messages as QM1's engine makes them for a put to a QREMOTE."""
    qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
    mqsc(qm, "DEFINE QLOCAL(QM2) USAGE(XMITQ)", "DEFINE QREMOTE(REMOTE.IN) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)")
    hconn = qm.connect()
    out = qm.open(hconn, ObjectDescriptor("REMOTE.IN"), C.MQOO_OUTPUT).hobj
    body = bytes(range(256)) * (size // 256) + bytes(size % 256)
    for _ in range(count):
        qm.put(hconn, out, MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(), body)
    xq = qm.open(hconn, ObjectDescriptor("QM2"), C.MQOO_INPUT_SHARED).hobj
    return [qm.get(hconn, xq, MQMD(), GetOptions(), 1 << 20).data for _ in range(count)]  # type: ignore[union-attr]


async def receiver(home: Path, batches: int, batch: int, size: int) -> tuple[float, float]:
    qm, server, channels = await start(
        "QM2", home, "DEFINE LISTENER(CHL) TRPTYPE(TCP) PORT(0) CONTROL(QMGR)", f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(RCVR)",
        "DEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)", "ALTER QMGR MAXUMSGS(999999999)")
    port = qm.state.channel_control.listeners["CHL"].port
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    conn = P.ChannelConnection(sender=True)
    writer.write(conn.send(P.Hello(CHANNEL, "QM1", batch, 4 * 1024 * 1024, 300, 999_999_999, pipelined=True)))
    ack = await _next(reader, conn)
    assert isinstance(ack, P.HelloAck) and ack.reason == 0 and ack.pipelined, ack
    conn.agreed(ack.max_msg_length)
    frames = b"".join(conn.send(P.Message(data)) for data in xmit_messages(batch, size))
    began, began_main = time.process_time(), time.thread_time()
    if PROFILING:
        PROFILE.enable()
    out = 0
    for seq in range(1, batches + 1):
        writer.write(frames + conn.send(P.BatchEnd(seq, batch)))
        out += 1
        if out == 2:  # PipeLineLength 2: the oldest batch's CONFIRM before a third goes
            assert isinstance(await _next(reader, conn), P.Confirm)
            out -= 1
    while out:
        assert isinstance(await _next(reader, conn), P.Confirm)
        out -= 1
    PROFILE.disable()
    spent = time.process_time() - began, time.thread_time() - began_main
    q = qm.objects.find("APP.IN")
    assert q is not None and len(q.messages) == batches * batch, (len(q.messages) if q else None)
    writer.close()
    await channels.stop()
    await server.stop(quiesce=False)
    qm.journal.close()
    return spent


def receiver_engine(home: Path, batches: int, batch: int, size: int) -> tuple[float, float]:
    """The receiving agent's batch path without the event loop: its calls per batch (the
    messages through ``ReceiverAgent.receive_all``, the synchronisation record, MQCMIT, the
    batch's destinations closed) and the journal's write of the batch, in this thread."""
    qm = QueueManager.start("QM2", FileJournal(home / "QM2"), SystemClock())
    mqsc(qm, "DEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)", "ALTER QMGR MAXUMSGS(999999999)",
         f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(RCVR)")
    agent = ReceiverAgent(EngineHost(qm, lambda lsn, fn: fn(), qm.take_sync_lsn), None,  # type: ignore[arg-type]
                          "replayed", {}, {}, set(), {})
    agent.name = CHANNEL
    agent.hconn = qm.connect(appl_name="bench", user="ferrymq", appl_type=C.MQAT_QMGR)
    agent.sync_hobj = qm.open(agent.hconn, ObjectDescriptor("SYSTEM.CHANNEL.SYNCQ"),
                              C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED).hobj
    messages = [(data, b"") for data in xmit_messages(batch, size)]
    began, began_main = time.process_time(), time.thread_time()
    for seq in range(1, batches + 1):
        step = agent.receive_all(messages)  # a batch read at once, as the agent takes it
        with contextlib.suppress(StopIteration):
            step.send(None)  # it awaits only to retry a put (MRRTY), which none needs here
        agent.write_sync(seq, "QM1")
        qm.commit(agent.hconn)
        agent.close_opened()
        qm.take_sync_lsn()
        pending = qm.journal.take_pending()
        if pending is not None:
            qm.journal.write_pending(pending)
            qm.journal.mark_durable(pending.lsn)
    spent = time.process_time() - began, time.thread_time() - began_main
    qm.journal.close()
    return spent


async def _next(reader: asyncio.StreamReader, conn: P.ChannelConnection) -> P.Event:
    while True:
        for ev in conn.events():
            return ev
        data = await reader.read(65536)
        assert data, "the agent closed the connection"
        conn.receive_data(data)


class ReplayedReceiver:
    """Answers HELLO_ACK, then each BATCH_END with its CONFIRM, reading frame headers only."""

    def __init__(self, expected: int) -> None:
        self.expected, self.messages = expected, 0
        self.done = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = P.ChannelConnection(sender=False)
        hello = await _next(reader, conn)
        assert isinstance(hello, P.Hello)
        writer.write(conn.send(P.HelloAck(0, "QM2", hello.batch_size, hello.max_msg_length, hello.heartbeat, 0,
                                          pipelined=True)))
        buf = bytearray(conn.buffer)
        while True:
            while len(buf) >= _HEAD.size:
                _, kind, length = _HEAD.unpack_from(buf)
                if len(buf) < _HEAD.size + length:
                    break
                if kind == P.BATCH_END:
                    seq, count = struct.unpack_from(">II", buf, _HEAD.size)
                    self.messages += count
                    writer.write(_HEAD.pack(P.MAGIC, P.CONFIRM, 8) + struct.pack(">II", seq, 0))
                    if self.messages >= self.expected:
                        self.done.set()
                del buf[:_HEAD.size + length]
            data = await reader.read(262_144)
            if not data:
                return
            buf += data


async def sender(home: Path, batches: int, batch: int, size: int, preload_only: bool) -> tuple[float, float]:
    count = batches * batch
    replay = ReplayedReceiver(count)
    listener = await asyncio.start_server(replay.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    qm, server, channels = await start(
        "QM1", home, "DEFINE QLOCAL(QM2) USAGE(XMITQ) MAXDEPTH(999999999)", "ALTER QMGR MAXUMSGS(999999999)",
        f"DEFINE CHANNEL({CHANNEL}) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) BATCHSZ({batch}) DISCINT(0)",
        "DEFINE QREMOTE(REMOTE.IN) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)")
    hconn = qm.connect()
    out = qm.open(hconn, ObjectDescriptor("REMOTE.IN"), C.MQOO_OUTPUT).hobj
    body = bytes(range(256)) * (size // 256) + bytes(size % 256)
    md, pmo = MQMD(persistence=C.MQPER_PERSISTENT), PutOptions(options=C.MQPMO_SYNCPOINT)
    for i in range(count):
        qm.put(hconn, out, md, pmo, body)
        if i % 1000 == 999 or i == count - 1:
            qm.commit(hconn)
            await server.settle()
    qm.disconnect(hconn)
    spent = 0.0, 0.0
    if not preload_only:
        began, began_main = time.process_time(), time.thread_time()
        if PROFILING:
            PROFILE.enable()
        channels.start_sender(CHANNEL)
        await asyncio.wait_for(replay.done.wait(), 600)
        while qm.objects.find("QM2").messages.depth:  # type: ignore[union-attr]
            await asyncio.sleep(0.001)  # the last batch's commit, after its CONFIRM
        PROFILE.disable()
        spent = time.process_time() - began, time.thread_time() - began_main
    await channels.stop()
    await server.stop(quiesce=False)
    listener.close()
    qm.journal.close()
    return spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--side", choices=["receiver", "sender", "receiver-engine"], required=True,
                    help="receiver-engine: the receiving agent's batch path alone, no event loop or sockets")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--preload-only", action="store_true", help="sender: put the messages, start no channel")
    ap.add_argument("--profile", metavar="FILE", help="cProfile the transfer alone into FILE (pstats)")
    ap.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop", help="as the server runs by default")
    args = ap.parse_args()
    global PROFILING
    PROFILING = bool(args.profile)
    home = Path(tempfile.mkdtemp(prefix="ferrymq-chl-batch-"))
    try:
        if args.side == "receiver-engine":
            spent = receiver_engine(home, args.batches, args.batch, args.size)
        else:
            work = (receiver(home, args.batches, args.batch, args.size) if args.side == "receiver"
                    else sender(home, args.batches, args.batch, args.size, args.preload_only))
            if args.loop == "uvloop":
                import uvloop
                spent = uvloop.run(work)
            else:
                spent = asyncio.run(work)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    n = args.batches * args.batch
    if args.profile:
        PROFILE.dump_stats(args.profile)
    if spent[0]:
        print(f"{args.side}: {n} messages, CPU {spent[0] * 1e6 / n:.1f} µs/msg ({spent[1] * 1e6 / n:.1f} in the "
              "event loop's thread, the rest the journal's writer)")


if __name__ == "__main__":
    main()
