"""Publish/subscribe on NATS through nats-py (asyncio, on uvloop when installed).

Core subjects: the publisher publishes to the run's subject and flushes every 1,024
publications; each subscriber is a plain subscription (no queue group: every subscriber
gets every publication) with pending limits large enough that the client never drops.
At most once: the server drops a subscriber that falls too far behind, and the run then
reports the lost deliveries instead of a figure.

JetStream (persistent): a file-storage stream on the subject per run, one durable pull
consumer per subscriber (each sees the whole stream), fetching up to 200 at a time and
acknowledging each; the publisher uses ``publish_async`` and waits for every
acknowledgement. The server acknowledges once written, not fsynced.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ferrymq.bench.contender import HOST, Target
from ferrymq.bench.link import POLL, Clock, Link, use_uvloop
from ferrymq.bench.pubsub import Deliveries, FanOut, Numbered

FLUSH_EVERY = 1024
FETCH = 200


async def _connect(port: int, **kw: Any) -> Any:
    import nats

    return await nats.connect(f"nats://{HOST}:{port}", **kw)


def _stream(tag: str) -> str:
    return tag.replace(".", "_")


def _publish(link: Link, target: Target, fan: FanOut, *, jetstream: bool) -> None:
    use_uvloop()

    async def main() -> None:
        nc = await _connect(target.port)
        js = nc.jetstream()
        send = js.publish_async if jetstream else nc.publish
        bodies = Numbered(fan.size)
        link.ready("publisher")
        await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
        clock = Clock()
        sent = 0
        while sent < fan.count and not link.late():
            for i in range(sent, min(sent + FLUSH_EVERY, fan.count)):
                await send(target.dest, bodies.body(i))
            if not jetstream:
                await nc.flush()
            sent = min(sent + FLUSH_EVERY, fan.count)
        if jetstream:
            await js.publish_async_completed()
        await nc.close()
        link.reports.put(clock.report("publisher", sent))

    asyncio.run(main())


class NatsCoreFanOut:
    """Core NATS subjects: every subscription gets every publication."""

    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        _publish(link, target, fan, jetstream=False)

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        use_uvloop()

        async def main() -> None:
            got = Deliveries(link, fan.count, index)
            done = asyncio.Event()
            nc = await _connect(target.port, pending_size=256 * 1024 * 1024)

            async def on(msg: Any) -> None:
                if got.add(msg.data):
                    done.set()

            await nc.subscribe(target.dest, cb=on, pending_msgs_limit=10_000_000, pending_bytes_limit=1 << 31)
            await nc.flush()  # the server has the subscription before the publisher starts
            link.ready("subscriber")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            while not done.is_set():
                try:
                    await asyncio.wait_for(done.wait(), POLL)
                except TimeoutError:
                    if got.idle():
                        break
            await nc.close()
            link.reports.put(got.report(clock.cpu()))

        asyncio.run(main())


class JetStreamFanOut:
    """A JetStream stream per run, one durable pull consumer per subscriber."""

    port: int

    def prepare_fan(self, run_tag: str, fan: FanOut) -> Target:
        async def main() -> None:
            from nats.js.api import StorageType, StreamConfig

            nc = await _connect(self.port)
            await nc.jetstream().add_stream(StreamConfig(name=_stream(run_tag), subjects=[run_tag],
                                                         storage=StorageType.FILE))
            await nc.close()

        asyncio.run(main())
        return Target(self.port, run_tag, fan.persistent)

    def discard_fan(self, target: Target, fan: FanOut) -> None:
        async def main() -> None:
            nc = await _connect(target.port)
            await nc.jetstream().delete_stream(_stream(target.dest))  # its consumers with it
            await nc.close()

        asyncio.run(main())

    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        _publish(link, target, fan, jetstream=True)

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        use_uvloop()

        async def main() -> None:
            import nats.errors

            got = Deliveries(link, fan.count, index)
            nc = await _connect(target.port)
            sub = await nc.jetstream().pull_subscribe(target.dest, durable=f"sub{index}",
                                                      stream=_stream(target.dest))
            link.ready("subscriber")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            while not got.done():
                try:
                    msgs = await sub.fetch(FETCH, timeout=POLL * 4)
                except nats.errors.TimeoutError:
                    if got.idle():
                        break
                    continue
                for m in msgs:
                    await m.ack()
                    got.add(m.data)
            await nc.flush()
            await nc.close()
            link.reports.put(got.report(clock.cpu()))

        asyncio.run(main())
