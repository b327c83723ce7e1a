"""NATS on 127.0.0.1:4222 through nats-py (asyncio, on uvloop when installed): core NATS
and JetStream.

Core: publish (flushed every 1,024 messages), a queue-group subscription per consumer
with pending limits large enough that nothing is dropped for a slow consumer unless the
broker itself drops it; request/reply with ``request``/``respond``. At most once.

JetStream (the persistent scenario): a stream on file storage per run, ``publish_async``
(up to 4,000 acknowledgements outstanding), one durable pull consumer shared by the
consuming processes, fetching up to 200 messages at a time and acknowledging each. The
server acknowledges a publish once the message is written, not fsynced: by default it
syncs its files every two minutes.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ferrymq.bench.contender import (
    HOST,
    PERSISTENT,
    PUBSUB,
    PUBSUB_PERSISTENT,
    REQUEST_REPLY,
    TRANSIENT,
    Contender,
    Target,
    record_trips_async,
)
from ferrymq.bench.link import POLL, Clock, Link, Tally, until_done, use_uvloop
from ferrymq.bench.model import Flow, RoundTrips
from ferrymq.bench.pubsub_nats import JetStreamFanOut, NatsCoreFanOut

PORT = 4222
FLUSH_EVERY = 1024
FETCH = 200


async def _connect(port: int, **kw: Any) -> Any:
    import nats

    return await nats.connect(f"nats://{HOST}:{port}", **kw)


def _stream(tag: str) -> str:
    return tag.replace(".", "_")


def _produce(link: Link, target: Target, flow: Flow, index: int, *, jetstream: bool) -> None:
    """Core: publish, flushing every 1,024. JetStream: publish_async, then wait for every
    acknowledgement."""
    use_uvloop()

    async def main() -> None:
        nc = await _connect(target.port)
        js = nc.jetstream()
        send = js.publish_async if jetstream else nc.publish
        body = os.urandom(flow.size)
        n = flow.share(index)
        link.ready("producer")
        await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
        clock = Clock()
        sent = 0
        while sent < n and not link.late():
            k = min(FLUSH_EVERY, n - sent)
            for _ in range(k):
                await send(target.dest, body)
            if not jetstream:
                await nc.flush()
            sent += k
        if jetstream:
            await js.publish_async_completed()
        await nc.close()
        link.reports.put(clock.report("producer", sent))

    asyncio.run(main())


class NatsCore(NatsCoreFanOut, Contender):
    name = "nats-core"
    system = "NATS core"
    client = "nats-py (asyncio, uvloop)"
    port = PORT
    family = "nats"
    modules = ("nats",)
    kinds = frozenset({TRANSIENT, REQUEST_REPLY, PUBSUB})
    guarantees = {  # noqa: RUF012
        TRANSIENT: "at most once: no queue, a slow consumer's messages are dropped",
        REQUEST_REPLY: "at most once",
        PUBSUB: "core subjects, at most once: a subscriber that falls behind is dropped",
    }

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        _produce(link, target, flow, index, jetstream=False)

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        use_uvloop()

        async def main() -> None:
            tally = Tally(link, flow.count, flow.consumers)
            done = asyncio.Event()
            nc = await _connect(target.port, pending_size=256 * 1024 * 1024)

            async def on(msg: Any) -> None:
                if tally.add():
                    done.set()

            await nc.subscribe(target.dest, queue="ferry", cb=on, pending_msgs_limit=10_000_000,
                               pending_bytes_limit=1 << 31)
            await nc.flush()
            link.ready("consumer")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            await until_done(done, tally)
            await nc.close()
            link.reports.put(tally.report(clock.cpu()))

        asyncio.run(main())

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        use_uvloop()

        async def main() -> None:
            nc = await _connect(target.port)
            done = asyncio.Event()
            count = {"n": 0}

            async def on(msg: Any) -> None:
                await msg.respond(msg.data)
                count["n"] += 1
                if count["n"] >= trips.count + trips.warmup:
                    done.set()

            await nc.subscribe(target.dest, cb=on)
            await nc.flush()
            link.ready("responder")
            while not done.is_set() and not link.late():
                await asyncio.sleep(POLL)
            await nc.close()

        asyncio.run(main())

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        use_uvloop()

        async def main() -> None:
            nc = await _connect(target.port)
            body = os.urandom(trips.size)

            async def one() -> None:
                await nc.request(target.dest, body, timeout=30)

            await record_trips_async(link, trips, one)
            await nc.close()

        asyncio.run(main())


class NatsJetStream(JetStreamFanOut, Contender):
    name = "nats-jetstream"
    system = "NATS JetStream"
    client = "nats-py (asyncio, uvloop): publish_async, pull consumer"
    port = PORT
    family = "nats"
    modules = ("nats",)
    kinds = frozenset({PERSISTENT, PUBSUB_PERSISTENT})
    guarantees = {  # noqa: RUF012
        PERSISTENT: "file stream, acked once written: NOT fsynced before the ack (sync every 2 min by default)",
        PUBSUB_PERSISTENT: "file stream, a durable pull consumer per subscriber, acked once written: "
                           "NOT fsynced before the ack (sync every 2 min by default)",
    }

    def prepare(self, run_tag: str, persistent: bool) -> Target:
        async def main() -> None:
            from nats.js.api import StorageType, StreamConfig

            nc = await _connect(self.port)
            await nc.jetstream().add_stream(StreamConfig(name=_stream(run_tag), subjects=[run_tag],
                                                         storage=StorageType.FILE))
            await nc.close()

        asyncio.run(main())
        return Target(self.port, run_tag, persistent)

    def discard(self, target: Target) -> None:
        async def main() -> None:
            nc = await _connect(target.port)
            await nc.jetstream().delete_stream(_stream(target.dest))
            await nc.close()

        asyncio.run(main())

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        _produce(link, target, flow, index, jetstream=True)

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        use_uvloop()

        async def main() -> None:
            import nats.errors

            tally = Tally(link, flow.count, flow.consumers)
            nc = await _connect(target.port)
            sub = await nc.jetstream().pull_subscribe(target.dest, durable="ferry", stream=_stream(target.dest))
            link.ready("consumer")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            while True:
                try:
                    msgs = await sub.fetch(FETCH, timeout=POLL * 4)
                except nats.errors.TimeoutError:
                    if tally.idle():
                        break
                    continue
                for m in msgs:
                    await m.ack()
                if tally.add(len(msgs)):
                    break
            await nc.flush()
            await nc.close()
            link.reports.put(tally.report(clock.cpu()))

        asyncio.run(main())
