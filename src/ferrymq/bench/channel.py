"""The channel scenario of ``ferrymq bench``: messages QM1 -> QM2 through a sender/receiver
channel (issue 19), beside the single queue manager's persistent put rate and a RabbitMQ
shovel moving the same messages between two queues, the three taking turns in one sitting.

ferrymq: two queue-manager processes (``ferrymq create/start`` in a scratch home on
127.0.0.1, reached through their local sockets), both with PipeLineLength 2 (the sender
sends a batch while the last one waits for its confirmation, docs/distributed.md). A
channel run puts N messages of SIZE bytes to QM1's remote queue while the channel is
stopped, then starts it; its rate is N over the time from START CHANNEL until QM2's queue
holds all N (committed there). The single queue manager's rate: N persistent puts to a
local queue of QM1 by one client, each durable before the next. CPU seconds of both
processes are read from /proc around each run.

RabbitMQ (127.0.0.1:5672, guest): N messages published with publisher confirms to a source
queue, then a dynamic shovel (``rabbitmqctl set_parameter shovel``, ack-mode on-confirm: a
message leaves the source only once the destination confirmed it, as a channel's batch is
committed only once the receiver's is) moves them to a destination queue. It needs the
rabbitmq_shovel plugin; without it the shovel is skipped with the command that enables it.

What is timed, both alike: the messages are already on the source (QM1's transmission queue,
the shovel's source queue) and the mover is defined; the clock starts when the mover is told
to go and stops when the destination holds all N. Neither clock holds a process start:
ferrymq's START CHANNEL is a PCF command on an open connection, and its window holds the
channel's connect and handshake (a few ms). ``rabbitmqctl`` starts an Erlang VM (about a
second), so the shovel is made and running before its clock starts, held off the messages:
the source queue has ``x-single-active-consumer`` and a holding consumer of the bench's
(prefetch 1, nothing acknowledged) is its active one when the shovel subscribes; once the
source shows both consumers (the shovel connected to both ends, consuming) the clock starts
and the holder's channel is closed, which hands the queue, its one held message requeued,
to the shovel. Its rate is N over that window, its own start-up outside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from ferrymq.bench.runner import Entry, Run

PERSISTENT_SCENARIO = "channel persistent"
TRANSIENT_SCENARIO = "channel non-persistent"
BASELINE = "ferrymq put, one qmgr"
SHOVEL = "rabbitmq-shovel"
ENABLE_SHOVEL = "rabbitmq-plugins enable rabbitmq_shovel"
POLL = 0.005
CHANNEL = "QM1.TO.QM2"
PIPELINE_LENGTH = 2


@dataclass(frozen=True)
class ChannelRuns:
    count: int
    size: int
    batch: int
    repeat: int
    time_limit: float


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux /proc); 0.0 where unavailable."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Pair:
    """QM1 and QM2 joined by the channel QM1.TO.QM2, in a scratch home of their own."""

    def __init__(self, batch: int) -> None:
        self.home = tempfile.mkdtemp(prefix="ferrymq-bench-channel-")
        self.pids: dict[str, int] = {}
        for name in ("QM1", "QM2"):
            self.cli("create", name, "--port", "0", "--pipeline-length", str(PIPELINE_LENGTH))
            self.pids[name] = int(json.loads(self.cli("start", name, "--output", "json"))["pid"])
        self.mqsc("QM2", "DEFINE LISTENER(CHL) TRPTYPE(TCP) PORT(0) CONTROL(QMGR)\nSTART LISTENER(CHL)\n"
                  "DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR)\nDEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)\n"
                  "ALTER QMGR MAXUMSGS(999999999)\n")
        port = self._listener_port()
        self.mqsc("QM1", "DEFINE QLOCAL(QM2) USAGE(XMITQ) MAXDEPTH(999999999)\n"
                  f"DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') XMITQ(QM2) "
                  f"BATCHSZ({batch}) DISCINT(0)\n"
                  "DEFINE QREMOTE(REMOTE.IN) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)\n"
                  "DEFINE QLOCAL(LOCAL.IN) MAXDEPTH(999999999)\nALTER QMGR MAXUMSGS(999999999)\n", check=False)

    def cli(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        env = dict(os.environ, FERRYMQ_HOME=self.home)
        return subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], env=env, check=check,
                              capture_output=True, text=True, input=stdin, timeout=120).stdout

    def mqsc(self, name: str, script: str, check: bool = True) -> str:
        return self.cli("mqsc", name, stdin=script, check=check)

    def _listener_port(self) -> int:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            out = self.mqsc("QM2", "DISPLAY LSSTATUS(CHL) PORT\n", check=False)
            if "PORT(" in out and "PORT(0)" not in out:
                return int(out.split("PORT(")[1].split(")")[0])
            time.sleep(0.1)
        raise RuntimeError("QM2's channel listener did not start")

    @contextlib.contextmanager
    def clients(self) -> Iterator[tuple[Any, Any]]:
        """Local (bindings) connections to QM1 and QM2, as the OS user who made them."""
        import ferrymq.client as fc

        old = os.environ.get("FERRYMQ_HOME")
        os.environ["FERRYMQ_HOME"] = self.home
        try:
            with fc.connect("QM1") as c1, fc.connect("QM2") as c2:
                yield c1, c2
        finally:
            if old is None:
                os.environ.pop("FERRYMQ_HOME", None)
            else:
                os.environ["FERRYMQ_HOME"] = old

    def prime(self, c1: Any, c2: Any, limit: float) -> None:
        """One message across, then STOP CHANNEL: the channel is left STOPPED, so that the
        messages of a run wait on the transmission queue until its START."""
        out, inq = c1.open("REMOTE.IN"), c2.open("APP.IN")
        out.put(b"prime")
        inq.get(wait=limit)
        out.close()
        inq.close()  # CLEAR QLOCAL, after each run, needs the queue closed
        self.mqsc("QM1", f"STOP CHANNEL({CHANNEL})\n")
        deadline = time.monotonic() + limit
        while "STATUS(STOPPED)" not in self.mqsc("QM1", f"DISPLAY CHSTATUS({CHANNEL})\n", check=False):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{CHANNEL} did not stop")
            time.sleep(0.05)

    def close(self) -> None:
        for name in self.pids:
            self.cli("stop", name, check=False)
        shutil.rmtree(self.home, ignore_errors=True)


def _wait_depth(depth: Callable[[], int], target: int, limit: float, what: str = "messages arrived") -> None:
    deadline = time.monotonic() + limit
    while depth() < target:
        if time.monotonic() > deadline:
            raise TimeoutError(f"not all {target} {what} in {limit:g} s")
        time.sleep(POLL)


def baseline_once(pair: Pair, c1: Any, runs: ChannelRuns, body: bytes) -> Run:
    q = c1.open("LOCAL.IN")
    cpu = _cpu_seconds(pair.pids["QM1"])
    t0 = time.perf_counter()
    for _ in range(runs.count):
        q.put(body, persistent=True)
    rate = runs.count / (time.perf_counter() - t0)
    used = _cpu_seconds(pair.pids["QM1"]) - cpu
    q.close()
    pair.mqsc("QM1", "CLEAR QLOCAL(LOCAL.IN)\n")  # CLEAR needs the queue closed
    return Run(rate=rate, cpu_us={"qmgr": used * 1e6 / runs.count})


def channel_once(pair: Pair, c1: Any, c2: Any, runs: ChannelRuns, body: bytes, persistent: bool) -> Run:
    from ferrymq.admin.pcfclient import CommandClient
    from ferrymq.mq import cfc as F
    from ferrymq.mq import constants as C
    from ferrymq.pcf.model import Command, Value

    remote = c1.open("REMOTE.IN")
    for _ in range(runs.count):
        remote.put(body, persistent=persistent)
    inq = c2.open("APP.IN", options=C.MQOO_INQUIRE | C.MQOO_INPUT_SHARED)
    commands = CommandClient(c1)  # START/STOP as PCF on this connection: no process start in the timing
    name: dict[int, Value] = {F.MQCACH_CHANNEL_NAME: CHANNEL}
    cpu1, cpu2 = _cpu_seconds(pair.pids["QM1"]), _cpu_seconds(pair.pids["QM2"])
    t0 = time.perf_counter()
    commands.run(Command(F.MQCMD_START_CHANNEL, name))
    try:
        _wait_depth(inq.depth, runs.count, runs.time_limit)
        rate = runs.count / (time.perf_counter() - t0)
    finally:
        commands.run(Command(F.MQCMD_STOP_CHANNEL, name))
        commands.close()
    used1, used2 = _cpu_seconds(pair.pids["QM1"]) - cpu1, _cpu_seconds(pair.pids["QM2"]) - cpu2
    inq.close()
    remote.close()
    pair.mqsc("QM2", "CLEAR QLOCAL(APP.IN)\n")
    return Run(rate=rate, cpu_us={"QM1": used1 * 1e6 / runs.count, "QM2": used2 * 1e6 / runs.count})


class Shovel:
    """A dynamic shovel between two queues of the local RabbitMQ, through rabbitmqctl."""

    def __init__(self) -> None:
        self.ctl = shutil.which("rabbitmqctl")

    def unavailable(self) -> str | None:
        if self.ctl is None:
            return "rabbitmqctl is not installed (a RabbitMQ broker with the shovel plugin is needed)"
        try:
            import pika

            pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672, heartbeat=0)).close()
        except Exception as exc:  # any refusal means: no broker to compare with
            return f"no RabbitMQ at 127.0.0.1:5672 ({type(exc).__name__})"
        plugins = subprocess.run([self.ctl, "eval", "application:which_applications()."], capture_output=True,
                                 text=True, timeout=60)
        if "rabbitmq_shovel" not in plugins.stdout:
            return f"the rabbitmq_shovel plugin is not enabled; enable it with: {ENABLE_SHOVEL}"
        return None

    def once(self, runs: ChannelRuns, body: bytes, persistent: bool, tag: str) -> Run:
        """One shovel run, timed as the module docstring says: from the moment the running
        shovel is handed the pre-loaded source queue until the destination holds all N."""
        import pika

        conn = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672, heartbeat=0))
        src, dst = f"{tag}.src", f"{tag}.dst"
        try:
            ch = conn.channel()
            for q in (src, dst):
                ch.queue_delete(q)  # left by a run that failed: its arguments may differ
            ch.queue_declare(src, durable=persistent, arguments={"x-single-active-consumer": True})
            ch.queue_declare(dst, durable=persistent)
            ch.confirm_delivery()
            props = pika.BasicProperties(delivery_mode=2 if persistent else 1)
            for _ in range(runs.count):
                ch.basic_publish("", src, body, props)
            holder = conn.channel()
            holder.basic_qos(prefetch_count=1)
            holder.basic_consume(src, lambda *_: None)
            spec = {"src-protocol": "amqp091", "src-uri": "amqp://", "src-queue": src, "dest-protocol": "amqp091",
                    "dest-uri": "amqp://", "dest-queue": dst, "ack-mode": "on-confirm",
                    "src-delete-after": "never"}
            subprocess.run([str(self.ctl), "set_parameter", "shovel", tag, json.dumps(spec)], check=True,
                           capture_output=True, timeout=60)
            try:
                _wait_depth(lambda: int(ch.queue_declare(src, passive=True).method.consumer_count), 2,
                            runs.time_limit, "consumers (the holder, the shovel) on its source")
                t0 = time.perf_counter()
                holder.close()
                _wait_depth(lambda: int(ch.queue_declare(dst, passive=True).method.message_count), runs.count,
                            runs.time_limit)
                rate = runs.count / (time.perf_counter() - t0)
            finally:
                subprocess.run([str(self.ctl), "clear_parameter", "shovel", tag], capture_output=True, timeout=60)
            for q in (src, dst):
                ch.queue_delete(q)
            return Run(rate=rate)
        finally:
            conn.close()


def channel_scenario(runs: ChannelRuns, say: Callable[[str], None], with_shovel: bool = True) -> list[Entry]:
    """The entries of both channel scenarios (see the module docstring); the shovel's only
    ``with_shovel`` (RabbitMQ among the contenders)."""
    body = os.urandom(runs.size)
    guarantee = {True: "persistent: batches prepared and committed at both ends once durable (once and once only)",
                 False: "non-persistent, NPMSPEED(FAST): sent outside batches, lost if the channel fails"}
    shovel = Shovel()
    skipped = (shovel.unavailable() or "") if with_shovel else ""
    entries: list[Entry] = []
    pair = Pair(runs.batch)
    try:
        with pair.clients() as (c1, c2):
            pair.prime(c1, c2, runs.time_limit)
            for persistent in (True, False):
                scenario = PERSISTENT_SCENARIO if persistent else TRANSIENT_SCENARIO
                chl = Entry(scenario, "ferrymq", "ferrymq", f"sender/receiver channel, BATCHSZ({runs.batch}), "
                            f"PipeLineLength {PIPELINE_LENGTH}",
                            guarantee[persistent])
                rabbit = Entry(scenario, SHOVEL, "RabbitMQ", "dynamic shovel, ack-mode on-confirm",
                               "durable queues, persistent messages, confirms" if persistent
                               else "transient messages, confirms", skipped)
                base = Entry(scenario, BASELINE, "ferrymq", "one client, one put at a time",
                             "persistent puts to a local queue, each durable before the next")
                turn: list[tuple[Entry, Callable[[], Run]]] = [
                    (chl, partial(channel_once, pair, c1, c2, runs, body, persistent))]
                if persistent:
                    turn.insert(0, (base, partial(baseline_once, pair, c1, runs, body)))
                if with_shovel:
                    tag = f"ferry-bench-{int(time.time())}-{'p' if persistent else 'np'}"
                    turn.append((rabbit, partial(shovel.once, runs, body, persistent, tag)))
                for i in range(runs.repeat):
                    for entry, once in turn:
                        if entry.skipped:
                            continue
                        say(f"{scenario}: {entry.contender} run {i + 1}/{runs.repeat}")
                        try:
                            entry.runs.append(once())
                        except (TimeoutError, OSError, subprocess.SubprocessError, RuntimeError) as exc:
                            entry.runs.append(Run(note=str(exc)))
                entries += [e for e, _ in turn]
    finally:
        pair.close()
    return entries


def targets(rows: list[dict[str, Any]]) -> list[str]:
    """Issue 19's targets, read from the rows: the channel's persistent rate at least half
    the single queue manager's persistent put rate, and at least 5x the shovel's."""
    def rate(contender: str) -> float | None:
        for r in rows:
            if r["scenario"] == PERSISTENT_SCENARIO and r["contender"] == contender and r.get("rate"):
                return float(r["rate"]["median"])
        return None

    ours, base, shovel = rate("ferrymq"), rate(BASELINE), rate(SHOVEL)
    out = []
    if ours and base:
        out.append(f"channel persistent / one qmgr's persistent puts: {ours / base:.2f} (target >= 0.5: "
                   f"{'met' if ours >= base / 2 else 'NOT met'})")
    if ours and shovel:
        out.append(f"channel persistent / RabbitMQ shovel: {ours / shovel:.2f} (target >= 5: "
                   f"{'met' if ours >= 5 * shovel else 'NOT met'})")
    return out
