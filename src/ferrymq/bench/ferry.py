"""ferrymq as a contender: a queue manager in its own process on a file journal in a
temporary directory, driven by the blocking client (``ferrymq.client``) in the way that
is fastest for each scenario:

- producers put asynchronously (MQPMO_ASYNC_RESPONSE: the client gathers puts into
  PutBatch frames) and check every outcome with MQSTAT at the end; in units of work they
  put under syncpoint and commit every ``uow`` messages;
- non-persistent consumers read ahead (the server pushes messages before they are asked
  for); persistent consumers and consumers in units of work take up to 200 (or ``uow``)
  messages per unit of work with ``Queue.get_batch`` under syncpoint (one round trip while
  they fit the negotiated frame size, more when they do not: 63 messages of 64 KiB fill
  4 MiB) and commit each unit (one fsync per 200), because persistent messages are never
  sent ahead;
- request/reply: asynchronous put of the request, then a get waiting on its CorrelId; the
  responder answers with an asynchronous put.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from typing import Any

from ferrymq.bench import pubsub_ferry
from ferrymq.bench.contender import (
    HOST,
    PERSISTENT,
    REQUEST_REPLY,
    TRANSIENT,
    Contender,
    Service,
    Target,
    record_trips,
)
from ferrymq.bench.link import POLL, Clock, Link, Tally, use_uvloop
from ferrymq.bench.model import Flow, RoundTrips, StoreRuns

QMGR = "BENCH"
BATCH = 200  # messages per get_batch for a persistent consumer outside units of work
FRAME_CUT = 2 * 1024 * 1024  # a batch reply this large was cut by the frame size (4 MiB)
CHECK_EVERY = 1024  # producers look at the time limit this often
# The models of subscriptions' managed queues. At their default MAXDEPTH (5,000) a fan-out
# that outruns its subscribers loses non-persistent publications (NPMSGDLV ALLAVAIL), as
# IBM MQ does; the bench gives them the depth of the runs' queues, as RabbitMQ's are unbounded.
MANAGED_MODELS = ("SYSTEM.NDURABLE.MODEL.QUEUE", "SYSTEM.DURABLE.MODEL.QUEUE")


def serve(ports: Any, commands: Any, answers: Any, directory: str) -> None:
    """The queue manager's process: a file journal in ``directory``, uvloop when installed."""
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer
    from ferrymq.server.gc_policy import FreezeSurvivors
    from ferrymq.store.file import FileJournal

    use_uvloop()

    async def main() -> None:
        journal = FileJournal(directory)
        qm = QueueManager.start(QMGR, journal, SystemClock())
        for model in MANAGED_MODELS:  # subscribers' queues as deep as the runs' own queues
            qm.objects.alter(model, {"MAXDEPTH": 999_999_999, "MAXMSGL": 100 * 1024 * 1024})
        FreezeSurvivors().install()  # as `ferrymq start` does: the contest is with the real server
        server = QueueManagerServer(qm, HOST, 0)
        await server.start()
        ports.put(server.port)
        loop = asyncio.get_running_loop()
        while True:
            command, arg = await loop.run_in_executor(None, commands.get)
            if command == "stop":
                break
            if command == "define":
                for name in arg:
                    qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999, "MAXMSGL": 100 * 1024 * 1024})
                answers.put(True)
            elif command == "delete":
                for name in arg:
                    with contextlib.suppress(Exception):  # still open by a process that did not end
                        qm.objects.delete(name, purge=True)
                answers.put(True)
            elif command == "stats":
                answers.put({"cpu": time.process_time(), "fdatasyncs": journal.stats().fdatasyncs})
        await server.stop(quiesce=False)

    asyncio.run(main())


class Ferrymq(pubsub_ferry.FerrymqFanOut, Contender):
    name = "ferrymq"
    system = "ferrymq"
    client = "ferrymq.client: async puts; read-ahead, or get_batch under syncpoint (server: uvloop, file journal)"
    kinds = frozenset({TRANSIENT, PERSISTENT, REQUEST_REPLY}) | pubsub_ferry.KINDS
    units_of_work = True
    guarantees = {  # noqa: RUF012
        TRANSIENT: "non-persistent MQ messages: lost if the queue manager stops",
        PERSISTENT: "persistent: fdatasync'd before each put counts and each get is committed",
        REQUEST_REPLY: "non-persistent request and reply, reply matched by CorrelId",
        **pubsub_ferry.GUARANTEES,
    }

    def __init__(self) -> None:
        self.service: Service | None = None
        self.directory = ""

    def start(self, ctx: Any) -> None:
        if self.service is None:
            self.directory = tempfile.mkdtemp(prefix="ferrymq-bench-")
            self.service = Service(ctx, serve, self.directory)
            self.port = self.service.port

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
            self.service = None
            shutil.rmtree(self.directory, ignore_errors=True)

    def unavailable(self) -> str | None:
        return None

    def unsupported(self, kind: str, flow: Flow | None) -> str | None:
        if kind in pubsub_ferry.KINDS:
            return pubsub_ferry.missing()
        return super().unsupported(kind, flow)

    def stats(self) -> dict[str, float]:
        assert self.service is not None
        result: dict[str, float] = self.service.ask("stats")
        return result

    def prepare(self, run_tag: str, persistent: bool) -> Target:
        assert self.service is not None
        dest = run_tag.upper().replace("-", ".")
        self.service.ask("define", [dest, dest + ".R"])
        return Target(self.port, dest, persistent)

    def discard(self, target: Target) -> None:
        if self.service is not None:
            self.service.ask("delete", [target.dest, target.dest + ".R"])

    # -- child processes ---------------------------------------------------------------------

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        import ferrymq.client as fc

        n = flow.share(index)
        body = os.urandom(flow.size)
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            q = qm.open(target.dest, async_put=flow.async_put)
            link.ready("producer")
            link.wait_go()
            clock = Clock()
            sent = 0
            step = flow.uow or CHECK_EVERY
            while sent < n and not link.late():
                k = min(step, n - sent)
                for _ in range(k):
                    q.put(body, persistent=flow.persistent, syncpoint=bool(flow.uow))
                if flow.uow:
                    qm.commit()
                sent += k
            if flow.async_put:
                status = qm.stat()
                if status.failures:
                    raise RuntimeError(f"{status.failures} asynchronous puts failed: {status}")
            link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        import ferrymq.client as fc
        from ferrymq.client.errors import NoMessageAvailable

        tally = Tally(link, flow.count, flow.consumers)
        batched = flow.persistent or flow.uow > 0
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            q = qm.open(target.dest, read_ahead=0 if batched else 500)
            link.ready("consumer")
            link.wait_go()
            clock = Clock()
            if batched:
                size = flow.uow or BATCH
                # Room for the whole batch (get_batch's default is 1 MiB: 15 messages of 64 KiB);
                # the client holds it to the negotiated frame size, so large messages take
                # several get_batch calls to make up one unit of work of ``size`` messages.
                # Another call only after a reply the frame cut short (the queue had more).
                room = max(1024 * 1024, size * (flow.size + 512))
                while True:
                    taken = 0
                    while taken < size:
                        got = q.get_batch(size - taken, wait=0 if taken else POLL, syncpoint=True, max_bytes=room)
                        taken += len(got)
                        if len(got) * (flow.size + 512) < FRAME_CUT:
                            break
                    if taken:
                        qm.commit()
                        if tally.add(taken):
                            break
                    elif tally.idle():
                        break
            else:
                while True:
                    try:
                        q.get(wait=POLL)
                    except NoMessageAvailable:
                        if tally.idle():
                            break
                        continue
                    if tally.add():
                        break
            link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import ferrymq.client as fc
        from ferrymq.client.errors import NoMessageAvailable

        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            requests, replies = qm.open(target.dest), qm.open(target.dest + ".R", async_put=True)
            link.ready("responder")
            answered = 0
            while answered < trips.count + trips.warmup and not link.late():
                try:
                    m = requests.get(wait=POLL)
                except NoMessageAvailable:
                    continue
                replies.put(m.data, correl_id=m.msg_id, persistent=False)
                answered += 1
            qm.stat()

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import ferrymq.client as fc

        body = os.urandom(trips.size)
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            requests, replies = qm.open(target.dest, async_put=True), qm.open(target.dest + ".R")
            reply_to = target.dest + ".R"

            def one() -> None:
                r = requests.put(body, persistent=False, reply_to_q=reply_to)
                replies.get(wait=30, correl_id=r.msg_id)

            record_trips(link, trips, one)

    def store_unit(self, link: Link, target: Target, runs: StoreRuns) -> None:
        """One of several processes each running units of work of persistent puts, one
        after another, for ``runs.seconds``: how the journal's group commit shares fsyncs."""
        import ferrymq.client as fc

        body = os.urandom(runs.size)
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            q = qm.open(target.dest, async_put=True)
            link.ready("unit")
            link.wait_go()
            clock = Clock()
            end = clock.first + runs.seconds
            sent = commits = 0
            while time.time() < end and not link.late():
                for _ in range(runs.uow):
                    q.put(body, persistent=True, syncpoint=True)
                qm.commit()
                sent += runs.uow
                commits += 1
            link.reports.put(clock.report("unit", sent, commits=commits))
