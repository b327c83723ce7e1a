"""The server's own cost per publication copy pushed to read-ahead subscribers, without
sockets: for counting instructions with callgrind (run it at two counts and divide the
difference by the difference of the deliveries) or reading the process's CPU time.

    PYTHONHASHSEED=0 valgrind --tool=callgrind python bench/pubsub_server_bench.py --subs S --n N

A queue manager server and its client handlers, with transports that only count what is
written. ``--subs`` clients each subscribe (a managed non-durable subscription) and
start read-ahead on it (Consume, a window of ``--window``); a publisher opens the topic and
sends ``--n`` publications of ``--size`` bytes in PutBatch frames of ``--run``, as a
client's asynchronous puts come. The frame is encoded once, beforehand (its items ask
for new MsgIds, so the same bytes stand for every run of publications), and fed to the
publisher's handler as one read per run: what is measured, and what changes with
``--n``, is the server's work, from the frame's decoding to the PushedBatch frames
written to the subscribers.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from ferrymq.engine.api import FakeClock
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.protocol import events as E
from ferrymq.protocol.connection import NEED_DATA, ClientConnection
from ferrymq.protocol.mdcodec import pack_md
from ferrymq.server import QueueManagerServer
from ferrymq.server.handler import ClientHandler
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


class Transport:
    """What a handler needs of a transport: writes are kept until read, or counted."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.written = 0
        self.keep = True

    def write(self, data: bytes) -> None:
        self.written += len(data)
        if self.keep:
            self.out.append(bytes(data))

    def writelines(self, parts: list[bytes]) -> None:
        self.write(b"".join(parts))

    def take(self) -> bytes:
        data, self.out = b"".join(self.out), []
        return data

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 0) if name == "peername" else default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


class Client:
    """One client's side of the conversation: frames sent to its handler, replies read."""

    def __init__(self, server: QueueManagerServer) -> None:
        self.conn = ClientConnection()
        self.transport = Transport()
        self.handler = ClientHandler(server)
        self.handler.connection_made(self.transport)  # type: ignore[arg-type]

    def call(self, request: object) -> object:
        self.handler.data_received(self.conn.send(request))  # type: ignore[arg-type]
        self.conn.receive_data(self.transport.take())
        reply = self.conn.next_event()
        assert reply is not NEED_DATA, request
        return reply


async def run(args: argparse.Namespace) -> None:
    qm = QueueManager.start("BENCH", MemoryJournal(), FakeClock())
    qm.objects.alter("SYSTEM.NDURABLE.MODEL.QUEUE", {"MAXDEPTH": 999_999_999})
    server = QueueManagerServer(qm, "127.0.0.1", 0)
    await server.start(listen=False)
    subscribers = []
    for _ in range(args.subs):
        sub = Client(server)
        sub.call(E.Connect(1, "BENCH"))
        reply = sub.call(E.Sub(2, C.MQSO_CREATE | C.MQSO_MANAGED | C.MQSO_NON_DURABLE, object_string="bench/fan"))
        assert isinstance(reply, E.SubReply), reply
        sub.handler.data_received(sub.conn.send(E.Consume(3, reply.hobj, args.window)))
        sub.transport.keep = False
        subscribers.append(sub)
    pub = Client(server)
    pub.call(E.Connect(1, "BENCH"))
    opened = pub.call(E.Open(2, "", C.MQOO_OUTPUT, C.MQOT_TOPIC, object_string="bench/fan"))
    assert isinstance(opened, E.OpenReply) and not opened.reason, opened
    md = pack_md(MQMD(version=C.MQMD_VERSION_2, persistence=C.MQPER_NOT_PERSISTENT))
    data = bytes(range(256)) * (args.size // 256) + bytes(args.size % 256)
    frame = pub.conn.send(E.PutBatch(opened.hobj, md, [(bytes(24), data)] * args.run, C.MQPMO_NO_SYNCPOINT))
    pub.transport.keep = False
    before = sum(s.transport.written for s in subscribers)
    cpu = time.process_time()
    for _ in range(args.n // args.run):
        pub.handler.data_received(frame)
    cpu = time.process_time() - cpu
    pushed = sum(s.transport.written for s in subscribers) - before
    deliveries = args.n * args.subs
    assert pushed > deliveries * args.size, (pushed, deliveries)
    print(f"{args.n} publications x {args.subs} subscribers: {cpu / deliveries * 1e6:.2f} us CPU per delivery; "
          f"{pushed / deliveries:,.0f} bytes pushed per delivery")
    for client in (*subscribers, pub):
        client.handler.connection_lost(None)
    await server.stop(quiesce=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2400)
    ap.add_argument("--subs", type=int, default=1)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--run", type=int, default=60, help="publications per PutBatch frame")
    ap.add_argument("--window", type=int, default=E.MAX_WINDOW, help="each subscriber's read-ahead window")
    args = ap.parse_args()
    if args.n > args.window:
        ap.error("--n must not exceed --window (the subscribers return no credit)")
    if args.n % args.run:
        ap.error("--n must be a multiple of --run")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
