"""Publish/subscribe on RabbitMQ (127.0.0.1:5672, guest/guest): a fanout exchange per run,
one queue bound to it per subscriber, through pika (blocking) and aio-pika (asyncio, on
uvloop when installed).

Non-persistent: a transient exchange; each subscriber declares its own exclusive,
server-named queue, binds it and consumes with automatic acknowledgement and a prefetch
of 1,000. Persistent: a durable exchange and one durable queue per subscriber (declared
and bound before the run), persistent messages, publisher confirms (a confirm comes once
every queue has the message on disk, fsynced), manual acknowledgements (one ``multiple``
ack per 64). pika's blocking channel waits for each confirm; aio-pika keeps a window of
256 publishes awaiting their confirms.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ferrymq.bench.contender import HOST, Target
from ferrymq.bench.link import POLL, Clock, Link, use_uvloop
from ferrymq.bench.pubsub import Deliveries, FanOut, Numbered

PREFETCH = 1000
ACK_EVERY = 64
CONFIRM_WINDOW = 256


def _blocking(port: int) -> Any:
    import pika

    return pika.BlockingConnection(pika.ConnectionParameters(HOST, port, heartbeat=0))


def durable_queue(target: Target, index: int) -> str:
    return f"{target.dest}.{index}"


class RabbitFanOut:
    """What both clients share: the exchange (and durable queues) made and removed with
    pika, in the main process."""

    port: int

    def prepare_fan(self, run_tag: str, fan: FanOut) -> Target:
        target = Target(self.port, run_tag, fan.persistent)
        conn = _blocking(self.port)
        try:
            ch = conn.channel()
            ch.exchange_declare(run_tag, "fanout", durable=fan.persistent)
            if fan.persistent:
                for i in range(fan.subscribers):
                    ch.queue_declare(durable_queue(target, i), durable=True)
                    ch.queue_bind(durable_queue(target, i), run_tag)
        finally:
            conn.close()
        return target

    def discard_fan(self, target: Target, fan: FanOut) -> None:
        conn = _blocking(target.port)
        try:
            ch = conn.channel()
            if fan.persistent:
                for i in range(fan.subscribers):
                    ch.queue_delete(durable_queue(target, i))
            ch.exchange_delete(target.dest)
        finally:
            conn.close()


class PikaFanOut(RabbitFanOut):
    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        import pika

        conn = _blocking(target.port)
        ch = conn.channel()
        if fan.persistent:
            ch.confirm_delivery()  # basic_publish now waits for the broker's confirm
        props = pika.BasicProperties(delivery_mode=2 if fan.persistent else 1)
        bodies = Numbered(fan.size)
        link.ready("publisher")
        link.wait_go()
        clock = Clock()
        sent = 0
        while sent < fan.count and not (sent % 1024 == 0 and link.late()):
            ch.basic_publish(target.dest, "", bodies.body(sent), props)
            sent += 1
        conn.process_data_events(0)
        conn.close()
        link.reports.put(clock.report("publisher", sent))

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        got = Deliveries(link, fan.count, index)
        conn = _blocking(target.port)
        ch = conn.channel()
        ch.basic_qos(prefetch_count=PREFETCH)
        if fan.persistent:
            queue = durable_queue(target, index)
        else:
            queue = ch.queue_declare("", exclusive=True).method.queue
            ch.queue_bind(queue, target.dest)
        state = {"unacked": 0, "tag": 0}

        def settle() -> None:
            if state["unacked"]:
                ch.basic_ack(state["tag"], multiple=True)
                state["unacked"] = 0

        def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
            got.add(body)
            if fan.persistent:
                state["tag"], state["unacked"] = method.delivery_tag, state["unacked"] + 1
                if state["unacked"] >= ACK_EVERY or got.done():
                    settle()

        ch.basic_consume(queue, on, auto_ack=not fan.persistent)
        link.ready("subscriber")
        link.wait_go()
        clock = Clock()
        while not got.done():
            conn.process_data_events(time_limit=POLL)
            if not got.done() and got.idle():
                break
        settle()
        conn.close()
        link.reports.put(got.report(clock.cpu()))


class AioPikaFanOut(RabbitFanOut):
    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        use_uvloop()
        asyncio.run(self._publish(link, target, fan))

    async def _publish(self, link: Link, target: Target, fan: FanOut) -> None:
        import aio_pika

        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel(publisher_confirms=fan.persistent)
            ex = await ch.get_exchange(target.dest, ensure=False)
            mode = aio_pika.DeliveryMode.PERSISTENT if fan.persistent else aio_pika.DeliveryMode.NOT_PERSISTENT
            bodies = Numbered(fan.size)
            link.ready("publisher")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            sent = 0
            while sent < fan.count and not link.late():
                window = range(sent, min(sent + CONFIRM_WINDOW, fan.count))
                msgs = [aio_pika.Message(bodies.body(i), delivery_mode=mode) for i in window]
                if fan.persistent:  # a window of publishes awaiting their confirms
                    await asyncio.gather(*(ex.publish(m, "") for m in msgs))
                else:
                    for m in msgs:
                        await ex.publish(m, "")
                sent += len(msgs)
            link.reports.put(clock.report("publisher", sent))

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        use_uvloop()
        asyncio.run(self._subscribe(link, target, fan, index))

    async def _subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        import aio_pika

        got = Deliveries(link, fan.count, index)
        done = asyncio.Event()
        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel()
            await ch.set_qos(prefetch_count=PREFETCH)
            if fan.persistent:
                q = await ch.get_queue(durable_queue(target, index), ensure=False)
            else:
                q = await ch.declare_queue(exclusive=True)
                await q.bind(target.dest)
            state: dict[str, Any] = {"unacked": 0}

            async def on(message: Any) -> None:
                if got.add(message.body):
                    done.set()
                if fan.persistent:
                    state["unacked"] += 1
                    if state["unacked"] >= ACK_EVERY or got.done():
                        await message.ack(multiple=True)
                        state["unacked"] = 0

            await q.consume(on, no_ack=not fan.persistent)
            link.ready("subscriber")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            while not done.is_set():
                try:
                    await asyncio.wait_for(done.wait(), POLL)
                except TimeoutError:
                    if got.idle():
                        break
            link.reports.put(got.report(clock.cpu()))
