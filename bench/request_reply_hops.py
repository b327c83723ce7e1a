"""Where a request/reply round trip spends its time inside the queue manager.

    .venv/bin/python bench/request_reply_hops.py [--n 3000] [--size 1024] [--event-loop auto]

Three processes on 127.0.0.1 (run on demand; never a timed test): a queue manager (the
engine, an in-memory journal and the TCP server on a free port), a responder (get with
wait, reply with the request's MsgId as CorrelId, asynchronous put) and this process as the
requester (asynchronous put with ReplyToQ, then get by CorrelId with wait): the shape of
``ferrymq bench --scenario request-reply``. Inside the queue manager, the steps of each
hop are timed by wrapping the server's own functions (frame decode, the MQI call, the
answer to the waiting getter); the wrappers add about a microsecond per step.

Prints the round trip's p50/p99 as the requester sees it, the server's CPU per round trip
(user and system, from os.times), and the p50 of each step.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

REQUESTS, REPLIES = "HOPS.REQUEST", "HOPS.REPLY"
WARMUP = 200


def _timed(owner: Any, name: str, record: Callable[[Any, float], None]) -> None:
    """Replace ``owner.name`` with a wrapper that records (result, seconds) of each call."""
    inner = getattr(owner, name)

    def wrapper(*args: Any) -> Any:
        t = time.perf_counter()
        out = inner(*args)
        record(out, time.perf_counter() - t)
        return out

    setattr(owner, name, wrapper)


def serve(ports: Any, stop: Any, event_loop: str) -> None:
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.protocol import connection as pc
    from ferrymq.server import QueueManagerServer, eventloop
    from ferrymq.server import handler as hd
    from ferrymq.server import server as sv
    from ferrymq.store.memory import MemoryJournal

    steps: dict[str, list[float]] = defaultdict(list)
    # Which request a handled event was: the wrapper sees the event as its second argument.
    inner_handle = hd.ops.handle

    def handle(h: Any, ev: Any) -> None:
        t = time.perf_counter()
        inner_handle(h, ev)
        steps[f"MQI call for {type(ev).__name__}"].append(time.perf_counter() - t)

    hd.ops.handle = handle  # type: ignore[assignment]
    _timed(pc._Machine, "next_event", lambda ev, s: steps[f"decode {type(ev).__name__} frame"].append(s))
    _timed(sv.QueueManagerServer, "answer_waits", lambda _r, s: steps["answer the waiting getter (encode, write)"].append(s))

    async def main() -> None:
        qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
        for name in (REQUESTS, REPLIES):
            qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
        server = QueueManagerServer(qm, "127.0.0.1", 0)
        await server.start()
        ports.put(server.port)
        ports.put(os.times()[:2])
        await asyncio.get_running_loop().run_in_executor(None, stop.wait)
        ports.put(os.times()[:2])
        ports.put({k: sorted(v) for k, v in steps.items() if len(v) > WARMUP})
        await server.stop(quiesce=False)

    with asyncio.Runner(loop_factory=eventloop.loop_factory(event_loop)) as runner:
        runner.run(main())


def respond(port: int, count: int) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        requests, replies = qm.open(REQUESTS), qm.open(REPLIES, async_put=True)
        for _ in range(count):
            m = requests.get(wait=30)
            replies.put(m.data, correl_id=m.msg_id, persistent=False)
        qm.stat()


def main() -> None:
    from ferrymq.server import eventloop

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3000, help=f"round trips timed (after {WARMUP} not timed)")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--event-loop", choices=eventloop.CHOICES, default="auto")
    a = ap.parse_args()
    import ferrymq.client as fc

    ctx = mp.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=serve, args=(ports, stop, a.event_loop))
    server.start()
    port = ports.get(timeout=60)
    cpu0 = ports.get(timeout=60)
    total = a.n + WARMUP
    responder = ctx.Process(target=respond, args=(port, total))
    body = os.urandom(a.size)
    times: list[float] = []
    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        requests, replies = qm.open(REQUESTS, async_put=True), qm.open(REPLIES)
        responder.start()
        for i in range(total):
            t = time.perf_counter()
            r = requests.put(body, persistent=False, reply_to_q=REPLIES)
            replies.get(wait=30, correl_id=r.msg_id)
            if i >= WARMUP:
                times.append(time.perf_counter() - t)
    responder.join()
    stop.set()
    cpu1 = ports.get(timeout=60)
    steps: dict[str, list[float]] = ports.get(timeout=60)
    server.join()
    times.sort()
    us = 1e6
    print(f"round trip p50 {times[len(times) // 2] * us:.0f} µs, p99 {times[int(len(times) * 0.99)] * us:.0f} µs "
          f"({a.n} round trips of {a.size} B)")
    print(f"queue manager CPU per round trip: user {(cpu1[0] - cpu0[0]) / total * us:.0f} µs, "
          f"system {(cpu1[1] - cpu0[1]) / total * us:.0f} µs")
    print("queue manager steps, p50 per call:")
    for name, values in sorted(steps.items()):
        print(f"  {name:45s} {values[len(values) // 2] * us:7.1f} µs  ({len(values)} calls)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
