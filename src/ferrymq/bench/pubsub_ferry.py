"""Publish/subscribe on ferrymq through the blocking client's ``publish`` and
``subscribe``: one topic string per run, non-durable (managed) subscriptions for the
non-persistent fan-out, durable ones for the persistent fan-out.

The publisher publishes asynchronously (``async_put``: the client gathers puts into
PutBatch frames, as the point-to-point producer does) and checks every outcome with
MQSTAT at the end. Non-persistent subscribers read ahead from their managed queue;
durable subscribers take up to 200 publications per round trip with ``get_batch`` under
syncpoint and commit each batch (one fsync per batch), because persistent messages are
never sent ahead. Each subscriber removes its subscription when it ends.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ferrymq.bench.contender import HOST, PUBSUB, PUBSUB_PERSISTENT, Target
from ferrymq.bench.link import POLL, Clock, Link
from ferrymq.bench.pubsub import Deliveries, FanOut, Numbered

KINDS = frozenset({PUBSUB, PUBSUB_PERSISTENT})
GUARANTEES = {
    PUBSUB: "non-persistent publications, a non-durable managed subscription per subscriber",
    PUBSUB_PERSISTENT: "persistent publications, a durable subscription per subscriber: fdatasync'd before "
                       "the publications count and each subscriber's gets are committed",
}
QMGR = "BENCH"
BATCH = 200  # publications per get_batch for a durable subscriber
READ_AHEAD = 500
CHECK_EVERY = 1024  # the publisher looks at the time limit this often


def missing() -> str | None:
    """Why the client cannot publish and subscribe here, or None."""
    from ferrymq.client import Client

    if not (hasattr(Client, "publish") and hasattr(Client, "subscribe")):
        return "publish/subscribe: not in ferrymq.client yet (Client.publish, Client.subscribe)"
    return None


def _name(target: Target, index: int) -> str:
    return f"{target.dest}.{index}"


class FerrymqFanOut:
    def discard_fan(self, target: Target, fan: FanOut) -> None:
        """Remove the durable subscriptions a failed run left (a finished one's
        subscribers removed their own)."""
        if not fan.persistent:
            return
        import ferrymq.client as fc

        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            for i in range(fan.subscribers):
                with contextlib.suppress(fc.MQError):  # still in use by a process that did not end
                    qm.subscribe(target.dest, durable=True, name=_name(target, i)).close(remove=True)

    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        import ferrymq.client as fc

        bodies = Numbered(fan.size)
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            qm.open_topic(target.dest)  # the client keeps the topic open for publish
            link.ready("publisher")
            link.wait_go()
            clock = Clock()
            sent = 0
            while sent < fan.count and not link.late():
                for i in range(sent, min(sent + CHECK_EVERY, fan.count)):
                    qm.publish(target.dest, bodies.body(i), persistent=fan.persistent, async_put=True)
                sent = min(sent + CHECK_EVERY, fan.count)
            status = qm.stat()
            if status.failures:
                raise RuntimeError(f"{status.failures} asynchronous publications failed: {status}")
            link.reports.put(clock.report("publisher", sent))

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        import ferrymq.client as fc
        from ferrymq.client.errors import NoMessageAvailable

        got = Deliveries(link, fan.count, index)
        with fc.connect(QMGR, f"{HOST}({target.port})") as qm:
            if fan.persistent:
                sub = qm.subscribe(target.dest, durable=True, name=_name(target, index))
            else:
                sub = qm.subscribe(target.dest, read_ahead=READ_AHEAD)
            link.ready("subscriber")
            link.wait_go()
            clock = Clock()
            if fan.persistent:
                room = max(1024 * 1024, BATCH * (fan.size + 512))
                queue: Any = sub.queue  # a Queue: get_batch is not in the subscription's protocol
                while not got.done():
                    batch = queue.get_batch(BATCH, wait=POLL, syncpoint=True, max_bytes=room)
                    if batch:
                        qm.commit()
                        for m in batch:
                            got.add(m.data)
                    elif got.idle():
                        break
            else:
                while not got.done():
                    try:
                        got.add(sub.get(POLL).data)
                    except NoMessageAvailable:
                        if got.idle():
                            break
            report = got.report(clock.cpu())
            sub.close(remove=True)
            link.reports.put(report)
