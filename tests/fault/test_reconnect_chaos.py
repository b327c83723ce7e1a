"""Chaos for reconnecting clients: a producer and a consumer, both with units of work and
automatic reconnect, run against a real queue-manager process while the network between
them is cut and the process is killed with SIGKILL and restarted on the same journal.

At the end: every message whose commit the producer saw acknowledged was received; no
message was received in two committed units of work; units of work in flight when the
connection went were failed with MQRC_BACKED_OUT (2003), not silently lost.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ferrymq.client as fc
from ferrymq.mq import constants as C

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
from tcp_proxy import TcpProxy

WORKER = Path(__file__).with_name("server_worker.py")
CHAOS_SECONDS = 12.0
BATCH = 5


class Server:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> int:
        self.proc = subprocess.Popen([sys.executable, str(WORKER), str(self.directory)], stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), line
        return int(line.split()[1])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()



def producer(addr: str, stop: threading.Event, acked: list[int], unsure: list[int], stats: dict[str, int]) -> None:
    qm = fc.connect("", addr, reconnect=60.0, heartbeat=1.0)
    q = qm.open("CHAOS")
    next_id = 0
    while not stop.is_set():
        ids = list(range(next_id, next_id + BATCH))
        try:
            for i in ids:
                q.put(b"%d" % i, persistent=True, syncpoint=True)
            qm.commit()
        except fc.MQError as exc:
            if exc.reason == C.MQRC_BACKED_OUT:
                stats["producer_backed_out"] += 1
                with contextlib.suppress(fc.MQError):
                    qm.backout()  # ends the lost unit (a no-op if commit already reported it)
                continue  # the batch is put again under the same ids: none of it was committed
            if exc.reason == C.MQRC_CALL_INTERRUPTED:  # the commit's outcome is unknown
                unsure.extend(ids)
                next_id += BATCH
                continue
            raise
        acked.extend(ids)
        next_id += BATCH
    stats["producer_reconnects"] = qm.reconnects
    qm.disconnect()


def consumer(addr: str, done: threading.Event, received: list[int], unsure: list[int], stats: dict[str, int]) -> None:
    qm = fc.connect("", addr, reconnect=60.0, heartbeat=1.0)
    q = qm.open("CHAOS")
    idle_since: float | None = None
    while True:
        batch: list[int] = []
        try:
            for _ in range(BATCH):
                try:
                    batch.append(int(q.get(wait=0.5, syncpoint=True).data))
                except fc.NoMessageAvailable:
                    break
            qm.commit()
        except fc.MQError as exc:
            if exc.reason == C.MQRC_BACKED_OUT:  # those messages are back on the queue
                stats["consumer_backed_out"] += 1
                with contextlib.suppress(fc.MQError):
                    qm.backout()
                continue
            if exc.reason == C.MQRC_CALL_INTERRUPTED:
                unsure.extend(batch)
                continue
            raise
        received.extend(batch)
        if batch:
            idle_since = None
        elif done.is_set():
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > 3.0:
                break
    stats["consumer_reconnects"] = qm.reconnects
    qm.disconnect()


@pytest.mark.slow
def test_reconnecting_clients_survive_cuts_and_kills(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("FERRYMQ_CHAOS_SEED", "7")))
    server = Server(tmp_path)
    proxy = TcpProxy(server.start())
    addr = f"127.0.0.1({proxy.port})"
    stop, done = threading.Event(), threading.Event()
    acked: list[int] = []
    put_unsure: list[int] = []
    received: list[int] = []
    got_unsure: list[int] = []
    stats = {"producer_backed_out": 0, "consumer_backed_out": 0}
    errors: list[BaseException] = []

    def guarded(fn: object, *args: object) -> None:
        try:
            fn(*args)  # type: ignore[operator]
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            stop.set()
            done.set()

    threads = [threading.Thread(target=guarded, args=(producer, addr, stop, acked, put_unsure, stats)),
               threading.Thread(target=guarded, args=(consumer, addr, done, received, got_unsure, stats))]
    for t in threads:
        t.start()
    cuts = kills = 0
    try:
        end = time.monotonic() + CHAOS_SECONDS
        while time.monotonic() < end and not errors:
            time.sleep(rng.uniform(0.3, 1.2))
            if rng.random() < 0.3:
                server.kill()
                kills += 1
                time.sleep(rng.uniform(0.0, 0.5))
                proxy.target_port = server.start()
            else:
                proxy.cut()
                cuts += 1
    finally:
        stop.set()
        threads[0].join(60)
        done.set()
        threads[1].join(60)
        proxy.close()
        server.kill()
    assert not errors, errors
    assert kills and cuts
    delivered = received + got_unsure
    missing = set(acked) - set(delivered)
    assert not missing, f"{len(missing)} acknowledged messages were never received, e.g. {sorted(missing)[:10]}"
    dupes = {i for i in received if received.count(i) > 1}
    assert not dupes, f"received in two committed units of work: {sorted(dupes)[:10]}"
    assert set(received) <= set(acked) | set(put_unsure)  # nothing appears that was never committed
    assert stats["producer_reconnects"] >= 1 and stats["consumer_reconnects"] >= 1
    print(f"acked={len(acked)} received={len(received)} cuts={cuts} kills={kills} {stats}")
