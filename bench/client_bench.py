"""Client/server throughput and latency (run on demand; never a timed test).

    .venv/bin/python bench/client_bench.py [--n 100000] [--size 1024] [--persistent] [--journal DIR]

Starts a QueueManagerServer in this process's child (its own process, as in production),
then one producer process (async puts) and one consumer process (read-ahead gets), and
times the transfer; then a request/reply round-trip latency run (sync put + get wait).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import sys
import time

from qmgr_process import cpu_seconds


def serve(port_q: mp.Queue, stop: mp.Event, journal_dir: str | None) -> None:  # type: ignore[type-arg]
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer

    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    if journal_dir:
        from ferrymq.store.file import FileJournal  # type: ignore[import-not-found]
        journal = FileJournal(journal_dir)
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
        try:
            from ferrymq.store.memory import MemoryJournal  # type: ignore[import-not-found]
            journal = MemoryJournal()
        except ImportError:
            from conftest import SlowJournal
            journal = SlowJournal()

    async def main() -> None:
        qm = QueueManager.start("QM1", journal, SystemClock())
        for name in ("BENCH", "REQ", "REPLY"):
            if qm.objects.find(name) is None:
                qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
        server = QueueManagerServer(qm, "127.0.0.1", 0)
        await server.start()
        port_q.put(server.port)
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await server.stop(quiesce=False)

    if os.environ.get("FERRYMQ_PROFILE"):
        import cProfile

        cProfile.runctx("asyncio.run(main())", globals(), locals(), os.environ["FERRYMQ_PROFILE"])
    else:
        asyncio.run(main())


def producer(port: int, n: int, size: int, persistent: bool, cpu: mp.Queue | None = None) -> None:  # type: ignore[type-arg]
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        q = qm.open("BENCH", async_put=True)
        body = os.urandom(size)
        started, c0 = time.time(), time.process_time()
        for _ in range(n):
            q.put(body, persistent=persistent)
        st = qm.stat()
        assert st.failures == 0, st
        finished = time.time()
    if cpu is not None:  # when the first put was made and how long putting took, on the wall clock
        cpu.put((started, finished - started, time.process_time() - c0))


def consumer(port: int, n: int, done: mp.Queue, persistent: bool) -> None:  # type: ignore[type-arg]
    import ferrymq.client as fc

    if persistent:
        # Persistent messages are never read ahead (a dropped connection would lose them):
        # the consumer takes them in batches of up to 200 under syncpoint (GET_BATCH), one
        # commit (one fsync) per batch.
        with fc.connect("QM1", f"127.0.0.1({port})") as qm:
            q = qm.open("BENCH")
            with qm.transaction():
                left = n - len(q.get_batch(200, wait=30))
            c0 = time.process_time()
            while left > 0:
                with qm.transaction():
                    left -= len(q.get_batch(min(200, left), wait=30))
            done.put(time.time())
            done.put(time.process_time() - c0)
        return
    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        q = qm.open("BENCH", read_ahead=500)
        q.get(wait=30)
        c0 = time.process_time()
        for _ in range(n - 1):
            q.get(wait=30)
        done.put(time.time())
        done.put(time.process_time() - c0)


def request_reply(port: int, n: int) -> list[float]:
    import threading

    import ferrymq.client as fc

    def responder() -> None:
        with fc.connect("QM1", f"127.0.0.1({port})") as qm:
            req = qm.open("REQ")
            for _ in range(n):
                m = req.get(wait=30)
                qm.put1("REPLY", m.data, correl_id=m.msg_id, persistent=False)

    t = threading.Thread(target=responder)
    t.start()
    lat: list[float] = []
    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        req, rep = qm.open("REQ"), qm.open("REPLY")
        for _ in range(n):
            t0 = time.perf_counter()
            r = req.put(b"ping", persistent=False, reply_to_q="REPLY")
            rep.get(wait=30, correl_id=r.msg_id)
            lat.append(time.perf_counter() - t0)
    t.join()
    return lat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--journal", default=None, help="FileJournal directory (default: memory)")
    ap.add_argument("--rr", type=int, default=5000, help="request/reply round trips")
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    port_q, stop, done, cpu = ctx.Queue(), ctx.Event(), ctx.Queue(), ctx.Queue()
    srv = ctx.Process(target=serve, args=(port_q, stop, a.journal))
    srv.start()
    port = port_q.get(timeout=30)
    cons = ctx.Process(target=consumer, args=(port, a.n, done, a.persistent))
    prod = ctx.Process(target=producer, args=(port, a.n, a.size, a.persistent, cpu))
    cons.start()
    time.sleep(0.5)
    srv_cpu0 = cpu_seconds(srv.pid or 0)  # the server idles while the producer starts
    prod.start()
    prod.join()
    started, t_prod, prod_cpu = cpu.get(timeout=60)
    elapsed = done.get(timeout=600) - started  # from the first put to the last get, one wall clock
    cons_cpu = done.get(timeout=60)
    srv_cpu = cpu_seconds(srv.pid or 0) - srv_cpu0
    cons.join()
    kind = "persistent" if a.persistent else "non-persistent"
    print(f"{kind} {a.size} B x {a.n}: producer {a.n / t_prod:,.0f} msg/s, end-to-end {a.n / elapsed:,.0f} msg/s", flush=True)
    # CPU per message in each process: robust to other load on the machine, unlike rates.
    per = lambda sec: f"{sec / a.n * 1e6:.1f}"  # noqa: E731
    print(f"CPU us/msg: producer {per(prod_cpu)}, server {per(srv_cpu)}, consumer {per(cons_cpu)}",
          flush=True)
    if a.rr:
        lat = sorted(request_reply(port, a.rr))
        p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1e6  # noqa: E731
        print(f"request/reply x {a.rr}: p50 {p(0.5):.0f} us, p99 {p(0.99):.0f} us, mean {statistics.mean(lat) * 1e6:.0f} us", flush=True)
    stop.set()
    srv.join()


if __name__ == "__main__":
    main()
