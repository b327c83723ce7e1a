"""ferrymq side by side with RabbitMQ, NATS and Mosquitto, in one run (``ferrymq bench``).

    pip install 'ferrymq[bench]'
    ferrymq bench [--n 20000] [--rr 2000] [--size 1024] [--repeat 3] [--output json|csv] [--plot out.png]

Two scenarios, the same for every broker, each side in its own process (so no broker is
limited by one Python process running both ends):

- throughput: one producer process sends N messages of SIZE bytes, one consumer process
  receives them; the rate is N over the time from the consumer's first message to its
  last. Non-persistent: nobody writes to disk.
- request/reply: a requester sends a request and waits for its reply from a responder
  process, RR times; latency percentiles of the round trip.

Each broker through its usual Python client, in its fast idiomatic form: ferrymq with
asynchronous puts and read-ahead (requests: asynchronous put, then a get waiting on the
CorrelId); RabbitMQ with pika (transient messages, auto-ack consumer, prefetch 500);
NATS core with nats-py (no delivery guarantee: a slow consumer drops messages); Mosquitto
with paho-mqtt at QoS 0 (at most once). A broker that is not listening on its usual
loopback port is skipped with a note, never faked.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import socket
import statistics
import time
from collections.abc import Callable
from typing import Any

PEERS = {"rabbitmq": 5672, "nats": 4222, "mosquitto": 1883}
GUARANTEE = {
    "ferrymq": "non-persistent MQ messages; lost only if the queue manager stops",
    "rabbitmq": "transient messages, auto-ack: lost if the broker stops",
    "nats": "core NATS: at most once, dropped for slow consumers",
    "mosquitto": "MQTT QoS 0: at most once",
}


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


# -- ferrymq ---------------------------------------------------------------------------------


def ferrymq_server(port_q: Any, stop: Any) -> None:
    from ferrymq.engine.api import SystemClock
    from ferrymq.engine.qmgr import QueueManager
    from ferrymq.server import QueueManagerServer
    from ferrymq.store.memory import MemoryJournal

    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass

    async def main() -> None:
        qm = QueueManager.start("QM1", MemoryJournal(), SystemClock())
        for name in ("BENCH", "REQ", "REPLY"):
            qm.objects.define("QLOCAL", name, {"MAXDEPTH": 999_999_999})
        server = QueueManagerServer(qm, "127.0.0.1", 0)
        await server.start()
        port_q.put(server.port)
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await server.stop(quiesce=False)

    asyncio.run(main())


def ferrymq_produce(port: int, n: int, size: int) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        q = qm.open("BENCH", async_put=True)
        body = os.urandom(size)
        for _ in range(n):
            q.put(body, persistent=False)
        assert qm.stat().failures == 0


def ferrymq_consume(port: int, n: int, ready: Any, out: Any) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        q = qm.open("BENCH", read_ahead=500)
        ready.set()
        q.get(wait=60)
        t0 = time.perf_counter()
        for _ in range(n - 1):
            q.get(wait=60)
        out.put(time.perf_counter() - t0)


def ferrymq_respond(port: int, n: int, ready: Any) -> None:
    import ferrymq.client as fc

    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        req = qm.open("REQ")
        rep = qm.open("REPLY", async_put=True)
        ready.set()
        for _ in range(n):
            m = req.get(wait=60)
            rep.put(m.data, correl_id=m.msg_id, persistent=False)


def ferrymq_request(port: int, n: int, size: int) -> list[float]:
    import ferrymq.client as fc

    lat = []
    with fc.connect("QM1", f"127.0.0.1({port})") as qm:
        req, rep = qm.open("REQ", async_put=True), qm.open("REPLY")
        body = os.urandom(size)
        for _ in range(n):
            t0 = time.perf_counter()
            r = req.put(body, persistent=False, reply_to_q="REPLY")
            rep.get(wait=60, correl_id=r.msg_id)
            lat.append(time.perf_counter() - t0)
    return lat


# -- RabbitMQ (pika) -------------------------------------------------------------------------


def _pika() -> Any:
    import pika

    return pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672))


def rabbit_setup() -> None:
    conn = _pika()
    ch = conn.channel()
    for name in ("ferry.bench", "ferry.req", "ferry.rep"):
        ch.queue_declare(name, durable=False, auto_delete=False)
        ch.queue_purge(name)
    conn.close()


def rabbit_produce(port: int, n: int, size: int) -> None:
    import pika

    conn = _pika()
    ch = conn.channel()
    body = os.urandom(size)
    props = pika.BasicProperties(delivery_mode=1)
    for _ in range(n):
        ch.basic_publish("", "ferry.bench", body, props)
    conn.close()


def rabbit_consume(port: int, n: int, ready: Any, out: Any) -> None:
    conn = _pika()
    ch = conn.channel()
    ch.basic_qos(prefetch_count=500)
    state = {"count": 0, "t0": 0.0}

    def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
        state["count"] += 1
        if state["count"] == 1:
            state["t0"] = time.perf_counter()
        if state["count"] == n:
            out.put(time.perf_counter() - state["t0"])
            ch.stop_consuming()

    ch.basic_consume("ferry.bench", on, auto_ack=True)
    ready.set()
    ch.start_consuming()
    conn.close()


def rabbit_respond(port: int, n: int, ready: Any) -> None:
    import pika

    conn = _pika()
    ch = conn.channel()
    count = {"n": 0}

    def on(ch_: Any, method: Any, props: Any, body: bytes) -> None:
        ch.basic_publish("", props.reply_to, body, pika.BasicProperties(correlation_id=props.correlation_id))
        count["n"] += 1
        if count["n"] == n:
            ch.stop_consuming()

    ch.basic_consume("ferry.req", on, auto_ack=True)
    ready.set()
    ch.start_consuming()
    conn.close()


def rabbit_request(port: int, n: int, size: int) -> list[float]:
    import pika

    conn = _pika()
    ch = conn.channel()
    body = os.urandom(size)
    lat = []
    for i in range(n):
        t0 = time.perf_counter()
        ch.basic_publish("", "ferry.req", body, pika.BasicProperties(reply_to="ferry.rep", correlation_id=str(i)))
        while True:
            method, _props, _ = ch.basic_get("ferry.rep", auto_ack=True)
            if method is not None:
                break
            conn.process_data_events(time_limit=0)
        lat.append(time.perf_counter() - t0)
    conn.close()
    return lat


# -- NATS core (nats-py) ---------------------------------------------------------------------


def nats_produce(port: int, n: int, size: int) -> None:
    import nats

    async def main() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        body = os.urandom(size)
        for i in range(n):
            await nc.publish("ferry.bench", body)
            if i % 1000 == 0:
                await nc.flush()
        await nc.flush()
        await nc.close()

    asyncio.run(main())


def nats_consume(port: int, n: int, ready: Any, out: Any) -> None:
    import nats

    async def main() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222", pending_size=256 * 1024 * 1024)
        done = asyncio.get_running_loop().create_future()
        state = {"count": 0, "t0": 0.0}

        async def on(msg: Any) -> None:
            state["count"] += 1
            if state["count"] == 1:
                state["t0"] = time.perf_counter()
            if state["count"] == n and not done.done():
                done.set_result(time.perf_counter() - state["t0"])

        await nc.subscribe("ferry.bench", cb=on, pending_msgs_limit=10_000_000, pending_bytes_limit=1 << 30)
        await nc.flush()
        ready.set()
        try:
            out.put(await asyncio.wait_for(done, 120))
        except TimeoutError:
            out.put(-float(state["count"]))  # messages were dropped: report how many arrived
        await nc.close()

    asyncio.run(main())


def nats_respond(port: int, n: int, ready: Any) -> None:
    import nats

    async def main() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        done = asyncio.get_running_loop().create_future()
        count = {"n": 0}

        async def on(msg: Any) -> None:
            await msg.respond(msg.data)
            count["n"] += 1
            if count["n"] == n and not done.done():
                done.set_result(None)

        await nc.subscribe("ferry.req", cb=on)
        await nc.flush()
        ready.set()
        await asyncio.wait_for(done, 300)
        await nc.close()

    asyncio.run(main())


def nats_request(port: int, n: int, size: int) -> list[float]:
    import nats

    async def main() -> list[float]:
        nc = await nats.connect("nats://127.0.0.1:4222")
        body = os.urandom(size)
        lat = []
        for _ in range(n):
            t0 = time.perf_counter()
            await nc.request("ferry.req", body, timeout=10)
            lat.append(time.perf_counter() - t0)
        await nc.close()
        return lat

    return asyncio.run(main())


# -- Mosquitto (paho-mqtt, QoS 0) ------------------------------------------------------------


def _mqtt(name: str) -> Any:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{name}-{os.getpid()}")
    c.connect("127.0.0.1", 1883)
    return c


def mqtt_produce(port: int, n: int, size: int) -> None:
    c = _mqtt("prod")
    c.loop_start()
    body = os.urandom(size)
    for _ in range(n):
        c.publish("ferry/bench", body, qos=0)
    time.sleep(0.5)
    c.loop_stop()
    c.disconnect()


def mqtt_consume(port: int, n: int, ready: Any, out: Any) -> None:
    c = _mqtt("cons")
    state: dict[str, float] = {"count": 0, "t0": 0.0, "t1": 0.0}

    def on(client: Any, userdata: Any, msg: Any) -> None:
        state["count"] += 1
        if state["count"] == 1:
            state["t0"] = time.perf_counter()
        state["t1"] = time.perf_counter()

    c.on_message = on
    c.subscribe("ferry/bench", qos=0)
    c.loop_start()
    time.sleep(0.3)
    ready.set()
    deadline = time.monotonic() + 120
    last = -1.0
    while state["count"] < n and time.monotonic() < deadline:
        time.sleep(1.0)
        if state["count"] == last and last > 0:
            break  # QoS 0 dropped some: stop when nothing more arrives
        last = state["count"]
    c.loop_stop()
    c.disconnect()
    out.put(state["t1"] - state["t0"] if state["count"] == n else -float(state["count"]))


def mqtt_respond(port: int, n: int, ready: Any) -> None:
    c = _mqtt("resp")
    count = {"n": 0}

    def on(client: Any, userdata: Any, msg: Any) -> None:
        client.publish("ferry/rep", msg.payload, qos=0)
        count["n"] += 1

    c.on_message = on
    c.subscribe("ferry/req", qos=0)
    c.loop_start()
    time.sleep(0.3)
    ready.set()
    deadline = time.monotonic() + 300
    while count["n"] < n and time.monotonic() < deadline:
        time.sleep(0.1)
    c.loop_stop()
    c.disconnect()


def mqtt_request(port: int, n: int, size: int) -> list[float]:
    import threading

    c = _mqtt("req")
    got = threading.Event()
    c.on_message = lambda client, userdata, msg: got.set()
    c.subscribe("ferry/rep", qos=0)
    c.loop_start()
    time.sleep(0.3)
    body = os.urandom(size)
    lat = []
    for _ in range(n):
        got.clear()
        t0 = time.perf_counter()
        c.publish("ferry/req", body, qos=0)
        if not got.wait(10):
            break
        lat.append(time.perf_counter() - t0)
    c.loop_stop()
    c.disconnect()
    return lat


# -- running ---------------------------------------------------------------------------------

Driver = tuple[Callable[..., None], Callable[..., None], Callable[..., None], Callable[..., list[float]]]
DRIVERS: dict[str, Driver] = {
    "ferrymq": (ferrymq_produce, ferrymq_consume, ferrymq_respond, ferrymq_request),
    "rabbitmq": (rabbit_produce, rabbit_consume, rabbit_respond, rabbit_request),
    "nats": (nats_produce, nats_consume, nats_respond, nats_request),
    "mosquitto": (mqtt_produce, mqtt_consume, mqtt_respond, mqtt_request),
}


def throughput(ctx: Any, name: str, port: int, n: int, size: int) -> float:
    produce, consume, _, _ = DRIVERS[name]
    ready, out = ctx.Event(), ctx.Queue()
    cons = ctx.Process(target=consume, args=(port, n, ready, out))
    cons.start()
    ready.wait(30)
    prod = ctx.Process(target=produce, args=(port, n, size))
    prod.start()
    prod.join(300)
    elapsed = float(out.get(timeout=300))
    cons.join(30)
    return n / elapsed if elapsed > 0 else elapsed  # negative: messages were dropped


def request_reply(ctx: Any, name: str, port: int, n: int, size: int) -> dict[str, float]:
    _, _, respond, request = DRIVERS[name]
    ready = ctx.Event()
    resp = ctx.Process(target=respond, args=(port, n, ready))
    resp.start()
    ready.wait(30)
    lat = sorted(request(port, n, size))
    resp.join(30)
    if resp.is_alive():
        resp.terminate()

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1e6

    return {"p50_us": pct(0.5), "p90_us": pct(0.9), "p99_us": pct(0.99), "max_us": lat[-1] * 1e6,
            "mean_us": statistics.mean(lat) * 1e6, "n": len(lat)}


Progress = Callable[[str, str], None]


def run_suite(brokers: list[str], n: int, rr: int, size: int, repeat: int,
              progress: Progress | None = None) -> dict[str, Any]:
    """Every scenario for every broker asked for; a broker not listening (or whose client
    library is not installed) is skipped with the reason, never faked."""
    ctx = mp.get_context("spawn")
    results: dict[str, Any] = {}
    stop = ctx.Event()
    port_q = ctx.Queue()
    server = ctx.Process(target=ferrymq_server, args=(port_q, stop))
    server.start()
    ferry_port = port_q.get(timeout=30)
    say = progress or (lambda broker, what: None)
    try:
        for name in brokers:
            port = ferry_port if name == "ferrymq" else PEERS[name]
            if name != "ferrymq" and not listening(port):
                results[name] = {"skipped": f"nothing listening on 127.0.0.1:{port}"}
                continue
            missing = _missing_client(name)
            if missing:
                results[name] = {"skipped": f"client library {missing!r} is not installed (pip install 'ferrymq[bench]')"}
                continue
            if name == "rabbitmq":
                rabbit_setup()
            rates = []
            for i in range(repeat):
                say(name, f"throughput run {i + 1}/{repeat}")
                rates.append(throughput(ctx, name, port, n, size))
            if name == "rabbitmq":
                rabbit_setup()
            say(name, "request/reply")
            rr_result = request_reply(ctx, name, port, rr, size)
            good = sorted(r for r in rates if r > 0)
            results[name] = {"throughput_msgs_per_s": statistics.median(good) if good else None,
                             "throughput_min": good[0] if good else None, "throughput_max": good[-1] if good else None,
                             "dropped_runs": len(rates) - len(good),
                             "arrived_in_dropped_runs": [int(-r) for r in rates if r <= 0],
                             "request_reply": rr_result, "guarantee": GUARANTEE[name]}
    finally:
        stop.set()
        server.join(30)
    ferry = results.get("ferrymq", {}).get("throughput_msgs_per_s")
    for name, r in results.items():
        tp = r.get("throughput_msgs_per_s")
        if name != "ferrymq" and ferry and tp:
            r["ferrymq_ratio"] = ferry / tp
    return results


def _missing_client(name: str) -> str | None:
    module = {"rabbitmq": "pika", "nats": "nats", "mosquitto": "paho.mqtt"}.get(name)
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError:
        return module
    return None
