"""Engine-only: publish/subscribe fan-out, for counting instructions with callgrind or
reading the process's CPU time per delivery (no sockets, no other processes).

    valgrind --tool=callgrind --callgrind-out-file=cg.N python bench/pubsub_engine_bench.py --n N
    python bench/pubsub_engine_bench.py --n 20000 --persistent

One publisher puts ``n`` publications of ``size`` bytes on one topic; ``subs`` subscriptions
(durable with --persistent, on queues of their own; else non-durable managed ones) take them
with ``get_many`` in batches of ``batch``: under syncpoint and committed per batch when
persistent. With ``--run N`` the publisher puts N publications per ``put_columns`` call, as
the asynchronous puts of a client arrive (one PutBatch frame); ``--batch`` and
``--sync-every`` should then be multiples of N. The persistent run uses a FileJournal in a temporary directory, synced every
``sync_every`` publications and after every subscriber's commit, as a group commit would.
Run it at two counts and divide the difference by the difference of the counts for the
cost per publication, start-up excluded.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from ferrymq.engine.api import (
    FakeClock,
    GetOptions,
    ObjectDescriptor,
    PutOptions,
    SubDescriptor,
    SystemClock,
    Waiting,
)
from ferrymq.engine.qmgr import QueueManager
from ferrymq.mq import constants as C
from ferrymq.store.file import FileJournal
from ferrymq.store.memory import MemoryJournal
from ferrymq.wire.mqmd import MQMD


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--subs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--sync-every", type=int, default=64)
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--run", type=int, default=1, help="publications per put_columns call (1: one MQPUT each)")
    ap.add_argument("--waiting", action="store_true",
                    help="subscribers wait as a read-ahead does (a streamed get_many with MQGMO_WAIT, credit "
                         "--batch), given copies as they are published, and wait again when their wait ends")
    ap.add_argument("--fake-clock", action="store_true",
                    help="a clock moved 4 ms per run of publications, so callgrind's counts repeat exactly")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        journal = FileJournal(directory) if args.persistent else MemoryJournal()
        clock = FakeClock() if args.fake_clock else SystemClock()
        qm = QueueManager.start("BENCH", journal, clock)
        for model in ("SYSTEM.DURABLE.MODEL.QUEUE", "SYSTEM.NDURABLE.MODEL.QUEUE"):
            qm.objects.alter(model, {"MAXDEPTH": 999_999_999})
        pub = qm.connect()
        topic = qm.open(pub, ObjectDescriptor(object_type=C.MQOT_TOPIC, object_string="bench/fan"),
                        C.MQOO_OUTPUT).hobj
        readers = []
        for i in range(args.subs):
            hconn = qm.connect()
            options = C.MQSO_CREATE | C.MQSO_MANAGED | (C.MQSO_DURABLE if args.persistent else C.MQSO_NON_DURABLE)
            sd = SubDescriptor(options, object_string="bench/fan", sub_name=f"bench{i}" if args.persistent else "")
            readers.append((hconn, qm.subscribe(hconn, sd).hobj))
        md = MQMD(persistence=C.MQPER_PERSISTENT if args.persistent else C.MQPER_NOT_PERSISTENT)
        pmo = PutOptions()
        gmo = GetOptions(C.MQGMO_NO_WAIT | (C.MQGMO_SYNCPOINT if args.persistent else 0), 0, C.MQMO_NONE,
                         msg_handle=True)
        data = bytes(range(256)) * (args.size // 256) + bytes(args.size % 256)
        got = 0
        wait_gmo = GetOptions(C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, C.MQWI_UNLIMITED, C.MQMO_NONE,
                              non_persistent_only=True, msg_handle=True)
        waits: dict[int, tuple[int, int]] = {}  # waiter id -> reader

        def wait_again(hconn: int, hobj: int) -> int:
            """The read-ahead pump's gets: what is there, then a wait (the count taken)."""
            taken = 0
            while True:
                results, stop = qm.get_many(hconn, hobj, MQMD(), wait_gmo, args.size, args.batch, 256 * 1024,
                                            streamed=True)
                taken += len(results)
                if isinstance(stop, Waiting):
                    waits[stop.waiter_id] = (hconn, hobj)
                    return taken

        if args.waiting:
            for hconn, hobj in readers:
                got += wait_again(hconn, hobj)
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(args.n):
            if isinstance(clock, FakeClock) and i % args.run == 0:
                clock.advance(0.004)
            if args.run == 1:
                qm.put(pub, topic, md, pmo, data)
            elif i % args.run == 0:  # the run's publications at once, as a PutBatch brings them
                assert qm.put_columns(pub, topic, md, pmo, [data] * min(args.run, args.n - i)) == [None] * min(
                    args.run, args.n - i)
            if i % args.sync_every == args.sync_every - 1 or i == args.n - 1:
                journal.sync()
            if args.waiting:
                if i % args.run == args.run - 1 or i == args.n - 1:
                    for d in qm.take_deliveries():
                        got += 1
                        if not d.waiting:
                            got += wait_again(*waits.pop(d.waiter_id))
            elif i % args.batch == args.batch - 1 or i == args.n - 1:
                for hconn, hobj in readers:
                    while True:
                        results, _ = qm.get_many(hconn, hobj, MQMD(), gmo, args.size, args.batch, 1 << 30)
                        got += len(results)
                        if args.persistent and results:
                            qm.commit(hconn)
                        if len(results) < args.batch:
                            break
                    journal.sync()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - started
        assert got == args.n * args.subs, (got, args.n * args.subs)
        stats = journal.stats()
        print(f"{args.n} publications x {args.subs} subscribers: {cpu / got * 1e6:.2f} us CPU per delivery, "
              f"{cpu / args.n * 1e6:.1f} per publication ({wall:.2f} s wall); journal: "
              f"{stats.bytes_written / args.n:,.0f} bytes written and {stats.compactions} compactions")
        journal.close()


if __name__ == "__main__":
    main()
