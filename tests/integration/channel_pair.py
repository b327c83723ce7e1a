"""Two real queue managers joined by a sender/receiver channel pair each way, for the
channel tests: QM1 --QM1.TO.QM2--> QM2 and back through QM2.TO.QM1 (docs/distributed.md).

Each queue manager's channel listener needs a port its partner's CONNAME names across
restarts, so it is chosen free once and kept. Not from the kernel's ephemeral range (what
binding port 0 gives): while its queue manager is down (killed, restarting) any outgoing
connection on the machine may be given that port as its own, and the listener of the
restarted queue manager then fails to bind (event=listener_failed): its channels never
come back and the partner's transmission queue never drains.
"""

from __future__ import annotations

import contextlib
import random
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from qm_process import QueueManagerProcess

import ferrymq.client as fc
from ferrymq.errors import FerryError

LOWEST = 10_000  # below: well-known and registered services' ports


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel gives to sockets bound to port 0 and to outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port() -> int:
    """A port free on 127.0.0.1 now, outside the ephemeral range (module docstring)."""
    low, high = ephemeral_range()
    ports = [*range(LOWEST, low), *range(high + 1, 65536)]
    for port in random.SystemRandom().sample(ports, min(len(ports), 200)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(port)
    raise AssertionError(f"no free port on 127.0.0.1 outside the ephemeral range {low}-{high}")


def setup_pair(home: Path, retry: str = "SHORTRTY(1000) SHORTTMR(1)", batch: int = 50,
               create_args: Mapping[str, tuple[str, ...]] | None = None) -> tuple[QueueManagerProcess,
                                                                                  QueueManagerProcess]:
    """``create_args``: more ``ferrymq create`` options by queue manager name."""
    args = create_args or {}
    qm1 = QueueManagerProcess(home, "QM1", args.get("QM1", ()))
    qm2 = QueueManagerProcess(home, "QM2", args.get("QM2", ()))
    qm1.start()
    qm2.start()
    ports = {"QM1": free_port(), "QM2": free_port()}
    for me, other in ((qm1, qm2), (qm2, qm1)):
        me.mqsc(f"""
DEFINE LISTENER(CHL.LISTENER) TRPTYPE(TCP) PORT({ports[me.name]}) CONTROL(QMGR)
DEFINE QLOCAL({other.name}) USAGE(XMITQ)
DEFINE CHANNEL({me.name}.TO.{other.name}) CHLTYPE(SDR) CONNAME('127.0.0.1({ports[other.name]})') +
       XMITQ({other.name}) BATCHSZ({batch}) HBINT(5) DISCINT(0) {retry}
DEFINE CHANNEL({other.name}.TO.{me.name}) CHLTYPE(RCVR)
DEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)
DEFINE QLOCAL(APP.REPLY)
DEFINE QREMOTE(TO.{other.name}.APP) RNAME(APP.IN) RQMNAME({other.name}) XMITQ({other.name})
START LISTENER(CHL.LISTENER)
""")
    return qm1, qm2


@contextlib.contextmanager
def running_pair(home: Path) -> Iterator[tuple[QueueManagerProcess, QueueManagerProcess]]:
    """``setup_pair`` with its defaults, both queue managers stopped at the end."""
    qm1, qm2 = setup_pair(home)
    try:
        yield qm1, qm2
    finally:
        qm1.stop()
        qm2.stop()


def wait_for(check: Callable[[], object], timeout: float = 60.0) -> None:
    """Poll ``check`` until it is true. The checks often run ``ferrymq mqsc`` as a process,
    seconds apiece on a loaded machine; the wait ends as soon as the state is seen.

    Raises:
        AssertionError: still false after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def received_numbers(qm: QueueManagerProcess) -> Counter[int]:
    """How often each number (8 bytes, big-endian) is on ``qm``'s APP.IN, got until none
    comes for 3 s."""
    got: Counter[int] = Counter()
    with fc.connect(qm.name, qm.conn_name) as c:
        q = c.open("APP.IN")
        while True:
            try:
                msg = q.get(wait=3.0)
            except FerryError:
                return got
            got[int.from_bytes(msg.data, "big")] += 1
