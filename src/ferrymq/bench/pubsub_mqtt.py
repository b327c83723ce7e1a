"""Publish/subscribe on Mosquitto (127.0.0.1:1883) through paho-mqtt: every subscriber
subscribes to the run's topic (no shared subscription) and gets every publication.

QoS 0 and QoS 1 with clean sessions for the non-persistent fan-out. The persistent
fan-out is QoS 1 with persistent sessions (``clean_session`` false, one fixed client id
per subscriber, removed after the run): Mosquitto keeps their messages in memory and
writes its database only every ``autosave_interval`` and at shutdown, never fsynced per
message. A subscriber that falls behind has its QoS 1 messages beyond
``max_queued_messages`` (1,000 by default) dropped: the run then reports them lost.

The publisher publishes from its own thread while paho's network thread sends (up to
1,000 QoS 1 messages in flight) and waits until the last one is out (QoS 0) or
acknowledged (QoS 1).
"""

from __future__ import annotations

import time
from typing import Any

from ferrymq.bench.contender import HOST, Target
from ferrymq.bench.link import POLL, Clock, Link
from ferrymq.bench.pubsub import Deliveries, FanOut, Numbered

INFLIGHT = 1000


def _client(client_id: str, port: int, *, clean: bool = True) -> Any:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean)
    c.max_inflight_messages_set(INFLIGHT)
    c.connect(HOST, port)
    return c


def _session_id(target: Target, index: int) -> str:
    return f"{target.dest}-{index}"


def _granted(c: Any, topic: str, qos: int) -> None:
    """Subscribe and run the loop until the broker has granted it."""
    granted: list[bool] = []
    c.on_subscribe = lambda *args: granted.append(True)
    c.subscribe(topic, qos=qos)
    deadline = time.monotonic() + 10
    while not granted:
        if time.monotonic() > deadline:
            raise TimeoutError(f"Mosquitto did not grant the subscription to {topic}")
        c.loop(timeout=0.1)


class MosquittoFanOut:
    qos: int

    def discard_fan(self, target: Target, fan: FanOut) -> None:
        """Persistent sessions outlive their connections: connect each with a clean
        session once, which removes it."""
        if not fan.persistent:
            return
        for i in range(fan.subscribers):
            c = _client(_session_id(target, i), target.port, clean=True)
            c.loop(timeout=0.1)
            c.disconnect()

    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        import os

        c = _client(f"ferry-publisher-{os.getpid()}", target.port)
        c.loop_start()
        bodies = Numbered(fan.size)
        link.ready("publisher")
        link.wait_go()
        clock = Clock()
        info = None
        sent = 0
        while sent < fan.count and not (sent % 1024 == 0 and link.late()):
            info = c.publish(target.dest, bodies.body(sent), qos=self.qos)
            sent += 1
        if info is not None:
            info.wait_for_publish(max(1.0, link.deadline - time.time()))
        report = clock.report("publisher", sent)  # before loop_stop, which waits out paho's 1 s select
        c.loop_stop()
        c.disconnect()
        link.reports.put(report)

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        import os

        got = Deliveries(link, fan.count, index)
        if fan.persistent:
            c = _client(_session_id(target, index), target.port, clean=False)
        else:
            c = _client(f"ferry-subscriber-{os.getpid()}", target.port)
        c.on_message = lambda client, userdata, msg: got.add(msg.payload)
        _granted(c, target.dest, self.qos)
        link.ready("subscriber")
        link.wait_go()
        clock = Clock()
        while not got.done():
            c.loop(timeout=POLL)
            if not got.done() and got.idle():
                break
        c.loop(timeout=POLL)  # send the last acknowledgements (QoS 1)
        c.disconnect()
        link.reports.put(got.report(clock.cpu()))
