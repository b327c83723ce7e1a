"""The contract every measured system meets: ferrymq, each peer broker through one Python
client, and the null broker that marks the machine's ceiling.

The runner (main process) asks a contender whether it can run at all (``unavailable``)
and a given scenario (``unsupported``), prepares a fresh destination for each run
(``prepare``/``discard``), and starts child processes that call ``produce``, ``consume``,
``respond`` and ``request`` (``publish`` and ``subscribe`` for publish/subscribe, on a
destination from ``prepare_fan``). A contender that needs a server of its own (ferrymq, the null
broker) starts it once per benchmark as a ``Service``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ferrymq.bench.link import Link
from ferrymq.bench.model import Flow, RoundTrips
from ferrymq.bench.pubsub import FanOut

TRANSIENT, PERSISTENT, REQUEST_REPLY = "transient", "persistent", "request/reply"
PUBSUB, PUBSUB_PERSISTENT = "pub/sub", "persistent pub/sub"
HOST = "127.0.0.1"  # loopback only: the command never measures across a network


@dataclass(frozen=True)
class Target:
    """Where one run's messages go: a port on 127.0.0.1 and a destination fresh for the run
    (so a run that lost messages leaves nothing for the next)."""

    port: int
    dest: str
    persistent: bool = False


def listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def missing_modules(*names: str) -> list[str]:
    return [n for n in names if importlib.util.find_spec(n) is None]


class Service:
    """A server in a child process (spawn). It puts its port on ``ports`` once listening,
    then answers ``(command, argument)`` pairs from ``commands`` on ``answers``."""

    def __init__(self, ctx: Any, target: Any, *args: Any) -> None:
        self.commands, self.answers, ports = ctx.Queue(), ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=target, args=(ports, self.commands, self.answers, *args), daemon=True)
        self.process.start()
        try:
            self.port: int = ports.get(timeout=60)
        except Exception:
            self.stop()
            raise RuntimeError(f"{getattr(target, '__name__', target)} did not start within 60 s") from None

    def ask(self, command: str, argument: Any = None, timeout: float = 30.0) -> Any:
        self.commands.put((command, argument))
        return self.answers.get(timeout=timeout)

    def stop(self) -> None:
        if self.process.is_alive():
            self.commands.put(("stop", None))
            self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class Contender:
    """A system measured side by side. Subclasses set the attributes and the roles they play."""

    name = ""  # unique key, e.g. "rabbitmq-pika"
    system = ""  # what is measured, e.g. "RabbitMQ"
    client = ""  # through which client and how, e.g. "pika, publisher confirms"
    port = 0  # the usual loopback port of a peer broker (0: started by the bench)
    family = ""  # peers of one family share a broker (and its port): "rabbitmq", "nats", "mosquitto"
    modules: tuple[str, ...] = ()  # client libraries it needs
    kinds: frozenset[str] = frozenset()
    guarantees: dict[str, str] = {}  # noqa: RUF012 (read-only per class)
    units_of_work = False

    def unavailable(self) -> str | None:
        """Why it cannot run at all here (never faked: the report says so), or None."""
        missing = missing_modules(*self.modules)
        if missing:
            return f"client library {', '.join(missing)} not installed (pip install 'ferrymq[bench]')"
        if self.port and not listening(self.port):
            return f"not running: nothing listening on {HOST}:{self.port}"
        return None

    def unsupported(self, kind: str, flow: Flow | None) -> str | None:
        if kind not in self.kinds:
            return f"{kind}: not offered by {self.system} ({self.client})"
        if flow is not None and flow.uow and not self.units_of_work:
            return f"units of work: not offered by {self.system} ({self.client})"
        return None

    def guarantee(self, kind: str) -> str:
        return self.guarantees.get(kind, "")

    # -- in the main process -------------------------------------------------------------------

    def start(self, ctx: Any) -> None:
        """Start what the contender needs for the whole benchmark (a server); idempotent."""

    def stop(self) -> None:
        """Stop what ``start`` started."""

    def prepare(self, run_tag: str, persistent: bool) -> Target:
        """A fresh destination for one run (declared, empty)."""
        return Target(self.port, run_tag, persistent)

    def discard(self, target: Target) -> None:
        """Remove the run's destination (and what a failed run left in it)."""

    def prepare_fan(self, run_tag: str, fan: FanOut) -> Target:
        """A fresh topic for one publish/subscribe run (and, when persistent, what its
        durable subscriptions need beforehand)."""
        return Target(self.port, run_tag, fan.persistent)

    def discard_fan(self, target: Target, fan: FanOut) -> None:
        """Remove what the run's subscriptions left (durable ones outlive their processes)."""

    # -- in child processes (spawned: state set in the main process is not there) --------------

    def produce(self, link: Link, target: Target, flow: Flow, index: int) -> None:
        raise NotImplementedError

    def consume(self, link: Link, target: Target, flow: Flow) -> None:
        raise NotImplementedError

    def respond(self, link: Link, target: Target, trips: RoundTrips) -> None:
        raise NotImplementedError

    def request(self, link: Link, target: Target, trips: RoundTrips) -> None:
        raise NotImplementedError

    def publish(self, link: Link, target: Target, fan: FanOut) -> None:
        """Send ``fan.count`` numbered publications (``pubsub.Numbered``) to the topic and
        report as "publisher"; when persistent, only after every one is acknowledged."""
        raise NotImplementedError

    def subscribe(self, link: Link, target: Target, fan: FanOut, index: int) -> None:
        """Subscription ``index``: say ready once the broker has it, count what arrives
        with ``pubsub.Deliveries`` and report it."""
        raise NotImplementedError


def record_trips(link: Link, trips: RoundTrips, one: Callable[[], object]) -> None:
    """The requester's loop for blocking clients: ``one()`` makes one round trip; the first
    ``trips.warmup`` are not recorded; stops at the time limit."""
    for _ in range(trips.warmup):
        one()
    link.ready("requester")
    link.wait_go()
    lat: list[float] = []
    cpu0, first = time.process_time(), time.time()
    for _ in range(trips.count):
        t0 = time.perf_counter()
        one()
        lat.append(time.perf_counter() - t0)
        if link.late():
            break
    _trips_report(link, lat, first, cpu0)


async def record_trips_async(link: Link, trips: RoundTrips, one: Callable[[], Awaitable[object]]) -> None:
    """``record_trips`` for asyncio clients."""
    for _ in range(trips.warmup):
        await one()
    link.ready("requester")
    await asyncio.get_running_loop().run_in_executor(None, link.wait_go)
    lat: list[float] = []
    cpu0, first = time.process_time(), time.time()
    for _ in range(trips.count):
        t0 = time.perf_counter()
        await one()
        lat.append(time.perf_counter() - t0)
        if link.late():
            break
    _trips_report(link, lat, first, cpu0)


def _trips_report(link: Link, lat: list[float], first: float, cpu0: float) -> None:
    link.reports.put({"role": "request", "count": len(lat), "first": first, "last": time.time(),
                      "cpu": time.process_time() - cpu0, "latencies": lat})
