"""RabbitMQ through pika (blocking) and aio-pika (asyncio, on uvloop when installed), on
127.0.0.1:5672 as guest/guest.

Non-persistent: transient messages to a non-durable queue, consumers with automatic
acknowledgement and a prefetch of 1,000. Persistent: a durable queue, persistent messages,
publisher confirms (the broker confirms once the message is written and fsynced), manual
acknowledgements (one ``multiple`` ack per 64 messages). pika's blocking channel waits for
each confirm before the next publish; aio-pika keeps a window of 256 publishes awaiting
their confirms. Units of work (pika only): AMQP transactions, ``tx_commit`` every K.
Request/reply: pika with direct reply-to; aio-pika with an exclusive reply queue, as in
its RPC pattern.
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
    record_trips,
    record_trips_async,
)
from ferrymq.bench.link import POLL, Clock, Link, Tally, until_done, use_uvloop
from ferrymq.bench.model import Flow, RoundTrips
from ferrymq.bench.pubsub_rabbit import AioPikaFanOut, PikaFanOut

PORT = 5672
PREFETCH = 1000
ACK_EVERY = 64
CONFIRM_WINDOW = 256
DIRECT_REPLY = "amq.rabbitmq.reply-to"

GUARANTEES = {
    TRANSIENT: "transient messages, auto-ack: lost if the broker stops",
    PERSISTENT: "durable queue, persistent messages, publisher confirms (fsynced before the confirm), manual acks",
    REQUEST_REPLY: "transient request and reply",
    PUBSUB: "fanout exchange, an exclusive queue per subscriber, transient messages, auto-ack",
    PUBSUB_PERSISTENT: "fanout exchange, a durable queue per subscriber, persistent messages, publisher "
                       "confirms (fsynced before the confirm), manual acks",
}


def _blocking(port: int) -> Any:
    import pika

    return pika.BlockingConnection(pika.ConnectionParameters(HOST, port, heartbeat=0))


class RabbitPika(PikaFanOut, Contender):
    name = "rabbitmq-pika"
    system = "RabbitMQ"
    client = "pika (blocking)"
    port = PORT
    family = "rabbitmq"
    modules = ("pika",)
    kinds = frozenset({TRANSIENT, PERSISTENT, REQUEST_REPLY, PUBSUB, PUBSUB_PERSISTENT})
    units_of_work = True
    guarantees = GUARANTEES

    def prepare(self, run_tag: str, persistent: bool) -> Target:
        conn = _blocking(self.port)
        try:
            conn.channel().queue_declare(run_tag, durable=persistent)
        finally:
            conn.close()
        return Target(self.port, run_tag, persistent)

    def discard(self, target: Target) -> None:
        conn = _blocking(target.port)
        try:
            conn.channel().queue_delete(target.dest)
        finally:
            conn.close()

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        import pika

        n = flow.share(index)
        body = os.urandom(flow.size)
        conn = _blocking(target.port)
        ch = conn.channel()
        if flow.uow:
            ch.tx_select()
        elif flow.persistent:
            ch.confirm_delivery()
        props = pika.BasicProperties(delivery_mode=2 if flow.persistent else 1)
        link.ready("producer")
        link.wait_go()
        clock = Clock()
        sent = 0
        step = flow.uow or 1024
        while sent < n and not link.late():
            k = min(step, n - sent)
            for _ in range(k):
                ch.basic_publish("", target.dest, body, props)
            if flow.uow:
                ch.tx_commit()
            sent += k
        conn.process_data_events(0)
        conn.close()
        link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        tally = Tally(link, flow.count, flow.consumers)
        conn = _blocking(target.port)
        ch = conn.channel()
        ch.basic_qos(prefetch_count=max(PREFETCH, flow.uow))
        manual = flow.persistent or flow.uow > 0
        every = flow.uow or ACK_EVERY
        if flow.uow:
            ch.tx_select()
        state = {"done": False, "unacked": 0, "tag": 0}

        def settle() -> None:
            if state["unacked"]:
                ch.basic_ack(state["tag"], multiple=True)
                if flow.uow:
                    ch.tx_commit()
                state["unacked"] = 0

        def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
            if manual:
                state["tag"], state["unacked"] = method.delivery_tag, state["unacked"] + 1
                if state["unacked"] >= every:
                    settle()
            if tally.add():
                settle()
                state["done"] = True

        ch.basic_consume(target.dest, on, auto_ack=not manual)
        link.ready("consumer")
        link.wait_go()
        clock = Clock()
        while not state["done"]:
            conn.process_data_events(time_limit=POLL)
            if not state["done"] and tally.idle():
                break
        settle()
        conn.close()
        link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import pika

        conn = _blocking(target.port)
        ch = conn.channel()
        count = {"n": 0}

        def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
            ch.basic_publish("", props.reply_to, body, pika.BasicProperties(correlation_id=props.correlation_id))
            count["n"] += 1

        ch.basic_consume(target.dest, on, auto_ack=True)
        link.ready("responder")
        while count["n"] < trips.count + trips.warmup and not link.late():
            conn.process_data_events(time_limit=POLL)
        conn.close()

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import pika

        conn = _blocking(target.port)
        ch = conn.channel()
        body = os.urandom(trips.size)
        got = {"n": 0}

        def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
            got["n"] += 1

        ch.basic_consume(DIRECT_REPLY, on, auto_ack=True)
        props = pika.BasicProperties(reply_to=DIRECT_REPLY, correlation_id="r")

        def one() -> None:
            want = got["n"] + 1
            ch.basic_publish("", target.dest, body, props)
            while got["n"] < want:
                conn.process_data_events(time_limit=1.0)

        record_trips(link, trips, one)
        conn.close()


class RabbitAioPika(AioPikaFanOut, Contender):
    name = "rabbitmq-aio-pika"
    system = "RabbitMQ"
    client = "aio-pika (asyncio, uvloop)"
    port = PORT
    family = "rabbitmq"
    modules = ("aio_pika",)
    kinds = frozenset({TRANSIENT, PERSISTENT, REQUEST_REPLY, PUBSUB, PUBSUB_PERSISTENT})
    guarantees = GUARANTEES

    prepare = RabbitPika.prepare
    discard = RabbitPika.discard

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        use_uvloop()
        asyncio.run(self._produce(link, target, flow, index))

    async def _produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        import aio_pika

        n = flow.share(index)
        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel(publisher_confirms=flow.persistent)
            ex = ch.default_exchange
            mode = aio_pika.DeliveryMode.PERSISTENT if flow.persistent else aio_pika.DeliveryMode.NOT_PERSISTENT
            msg = aio_pika.Message(os.urandom(flow.size), delivery_mode=mode)
            link.ready("producer")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            sent = 0
            while sent < n and not link.late():
                k = min(CONFIRM_WINDOW, n - sent)
                if flow.persistent:  # a window of publishes awaiting their confirms
                    await asyncio.gather(*(ex.publish(msg, target.dest) for _ in range(k)))
                else:
                    for _ in range(k):
                        await ex.publish(msg, target.dest)
                sent += k
            link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        use_uvloop()
        asyncio.run(self._consume(link, target, flow))

    async def _consume(self, link: Link, target: Target, flow: Flow) -> None:
        import aio_pika

        tally = Tally(link, flow.count, flow.consumers)
        done = asyncio.Event()
        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel()
            await ch.set_qos(prefetch_count=PREFETCH)
            q = await ch.get_queue(target.dest, ensure=False)
            manual = flow.persistent
            state: dict[str, Any] = {"unacked": 0, "last": None}

            async def on(message: Any) -> None:
                if manual:
                    state["unacked"] += 1
                    state["last"] = message
                    if state["unacked"] >= ACK_EVERY:
                        await message.ack(multiple=True)
                        state["unacked"] = 0
                if tally.add():
                    done.set()

            await q.consume(on, no_ack=not manual)
            link.ready("consumer")
            await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
            clock = Clock()
            await until_done(done, tally)
            if manual and state["unacked"]:
                await state["last"].ack(multiple=True)
            link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        use_uvloop()
        asyncio.run(self._respond(link, target, trips))

    async def _respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import aio_pika

        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel()
            q = await ch.get_queue(target.dest, ensure=False)
            count = {"n": 0}
            done = asyncio.Event()

            async def on(message: Any) -> None:
                await ch.default_exchange.publish(
                    aio_pika.Message(message.body, correlation_id=message.correlation_id), message.reply_to)
                count["n"] += 1
                if count["n"] >= trips.count + trips.warmup:
                    done.set()

            await q.consume(on, no_ack=True)
            link.ready("responder")
            while not done.is_set() and not link.late():
                await asyncio.sleep(POLL)

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        use_uvloop()
        asyncio.run(self._request(link, target, trips))

    async def _request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        import aio_pika

        conn = await aio_pika.connect(host=HOST, port=target.port)
        async with conn:
            ch = await conn.channel()
            replies = await ch.declare_queue(exclusive=True, auto_delete=True)
            loop = asyncio.get_running_loop()
            waiting: dict[str, asyncio.Future[None]] = {}

            async def on(message: Any) -> None:
                fut = waiting.pop(message.correlation_id, None)
                if fut is not None:
                    fut.set_result(None)

            await replies.consume(on, no_ack=True)
            body = os.urandom(trips.size)
            serial = iter(range(1 << 62))

            async def one() -> None:
                key = str(next(serial))
                fut = waiting[key] = loop.create_future()
                await ch.default_exchange.publish(
                    aio_pika.Message(body, correlation_id=key, reply_to=replies.name), target.dest)
                await asyncio.wait_for(fut, 30)

            await record_trips_async(link, trips, one)
