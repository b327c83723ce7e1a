"""Mosquitto on 127.0.0.1:1883 through paho-mqtt, at QoS 0 (the non-persistent scenario and
request/reply) and QoS 1 (the persistent scenario).

Producers publish from their thread while paho's network thread sends (up to 1,000 QoS 1
messages in flight) and wait until the last one is out (QoS 0) or acknowledged (QoS 1).
Consumers subscribe at the same QoS (a shared subscription when there are several) and run
paho's loop in their own thread, so callbacks and counting stay on one thread.

QoS 0 is at most once: Mosquitto drops messages for a client that does not keep up.
QoS 1 is at least once between connected clients; Mosquitto keeps messages in memory and
saves them to disk only periodically (``autosave_interval``), never fsynced per message.
"""

from __future__ import annotations

import os
import time
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
)
from ferrymq.bench.link import POLL, Clock, Link, Tally
from ferrymq.bench.model import Flow, RoundTrips
from ferrymq.bench.pubsub_mqtt import MosquittoFanOut

PORT = 1883
INFLIGHT = 1000


def _client(role: str, port: int) -> Any:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"ferry-{role}-{os.getpid()}")
    c.max_inflight_messages_set(INFLIGHT)
    c.connect(HOST, port)
    return c


def _subscribe(c: Any, topic: str, qos: int) -> None:
    """Subscribe and run the loop until the broker has granted it (the producer must not
    start before)."""
    granted: list[bool] = []
    c.on_subscribe = lambda *args: granted.append(True)
    c.subscribe(topic, qos=qos)
    deadline = time.monotonic() + 10
    while not granted:
        if time.monotonic() > deadline:
            raise TimeoutError(f"Mosquitto did not grant the subscription to {topic}")
        c.loop(timeout=0.1)


class Mosquitto(MosquittoFanOut, Contender):
    system = "Mosquitto"
    port = PORT
    family = "mosquitto"
    modules = ("paho",)
    qos = 0

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        c = _client("producer", target.port)
        c.loop_start()
        body = os.urandom(flow.size)
        n = flow.share(index)
        link.ready("producer")
        link.wait_go()
        clock = Clock()
        info = None
        sent = 0
        while sent < n and not link.late():
            info = c.publish(target.dest, body, qos=self.qos)
            sent += 1
        if info is not None:
            info.wait_for_publish(max(1.0, link.deadline - time.time()))
        c.loop_stop()
        c.disconnect()
        link.reports.put(clock.report("producer", sent))

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        tally = Tally(link, flow.count, flow.consumers)
        c = _client("consumer", target.port)
        state = {"done": False}

        def on(client: Any, userdata: Any, msg: Any) -> None:
            if tally.add():
                state["done"] = True

        c.on_message = on
        _subscribe(c, target.dest if flow.consumers == 1 else f"$share/ferry/{target.dest}", self.qos)
        link.ready("consumer")
        link.wait_go()
        clock = Clock()
        while not state["done"]:
            c.loop(timeout=POLL)
            if not state["done"] and tally.idle():
                break
        c.disconnect()
        link.reports.put(tally.report(clock.cpu()))

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        c = _client("responder", target.port)
        count = {"n": 0}

        def on(client: Any, userdata: Any, msg: Any) -> None:
            client.publish(target.dest + "/r", msg.payload, qos=self.qos)
            count["n"] += 1

        c.on_message = on
        _subscribe(c, target.dest, self.qos)
        link.ready("responder")
        while count["n"] < trips.count + trips.warmup and not link.late():
            c.loop(timeout=POLL)
        c.loop(timeout=POLL)
        c.disconnect()

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        c = _client("requester", target.port)
        got = {"n": 0}
        c.on_message = lambda client, userdata, msg: got.__setitem__("n", got["n"] + 1)
        _subscribe(c, target.dest + "/r", self.qos)
        body = os.urandom(trips.size)

        def one() -> None:
            want = got["n"] + 1
            c.publish(target.dest, body, qos=self.qos)
            deadline = time.monotonic() + 30
            while got["n"] < want:
                if time.monotonic() > deadline:
                    raise TimeoutError("no reply within 30 s (QoS 0 may drop)")
                c.loop(timeout=1.0)

        record_trips(link, trips, one)
        c.disconnect()


class MosquittoQos0(Mosquitto):
    name = "mosquitto-qos0"
    client = "paho-mqtt, QoS 0"
    kinds = frozenset({TRANSIENT, REQUEST_REPLY, PUBSUB})
    guarantees = {  # noqa: RUF012
        TRANSIENT: "MQTT QoS 0: at most once, dropped when a client falls behind",
        REQUEST_REPLY: "MQTT QoS 0: at most once",
        PUBSUB: "MQTT QoS 0: at most once, dropped when a subscriber falls behind",
    }


class MosquittoQos1(Mosquitto):
    name = "mosquitto-qos1"
    client = "paho-mqtt, QoS 1, 1,000 in flight"
    qos = 1
    kinds = frozenset({PERSISTENT, PUBSUB, PUBSUB_PERSISTENT})
    guarantees = {  # noqa: RUF012
        PERSISTENT: "MQTT QoS 1: at least once while connected; in memory, saved to disk only periodically",
        PUBSUB: "MQTT QoS 1, clean sessions: at least once while connected; queue beyond 1,000 dropped",
        PUBSUB_PERSISTENT: "MQTT QoS 1, persistent sessions; in memory, saved to disk only every "
                           "autosave_interval, never fsynced per message",
    }
