"""Messages QM1 -> QM2 through a sender/receiver channel, beside the single queue
manager's own persistent put rate in the same sitting (issue 19's target: a channel moves
persistent messages at least at half that rate).

Two queue-manager processes (``ferrymq`` CLI, scratch FERRYMQ_HOME, 127.0.0.1). For each
persistence: N messages of SIZE bytes are put to QM1's remote queue while the channel is
stopped, then START CHANNEL; the rate is N over the time from START until QM2's queue holds them
all (committed there). The baseline is N puts of the same messages to a local queue of
QM1 by one client, each acknowledged (persistent: durable) before the next. CPU seconds of
both queue managers are read from /proc around each phase (wall-clock is noisy here).

    PYTHONPATH=src python bench/channel_bench.py [--count N] [--size BYTES] [--batch BATCHSZ]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from qmgr_process import cpu_seconds

import ferrymq.client as fc
from ferrymq.mq import constants as C


def _cli(home: str, *args: str, stdin: str | None = None) -> str:
    env = dict(os.environ, FERRYMQ_HOME=home)
    return subprocess.run([sys.executable, "-m", "ferrymq.cli", *args], env=env, check=True, capture_output=True,
                          text=True, input=stdin).stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(home: str, name: str) -> tuple[str, int]:
    _cli(home, "create", name, "--port", "0", "--chlauth", "disabled")  # its clients are administrators
    doc = json.loads(_cli(home, "start", name, "--output", "json"))
    return f"127.0.0.1({doc['port']})", int(doc["pid"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=50)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="ferrymq-channel-bench-")
    qm1, pid1 = _start(home, "QM1")
    qm2, pid2 = _start(home, "QM2")
    port = _free_port()
    _cli(home, "mqsc", "QM2", stdin=f"DEFINE LISTENER(L) TRPTYPE(TCP) PORT({port}) CONTROL(QMGR)\nSTART LISTENER(L)\n"
         "DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(RCVR)\nDEFINE QLOCAL(APP.IN) MAXDEPTH(999999999)\n"
         "ALTER QMGR MAXUMSGS(10000000)\n")
    _cli(home, "mqsc", "QM1", stdin="DEFINE QLOCAL(QM2) USAGE(XMITQ) MAXDEPTH(999999999)\n"
         "DEFINE QREMOTE(REMOTE.IN) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2)\nDEFINE QLOCAL(LOCAL.IN) MAXDEPTH(999999999)\n"
         "ALTER QMGR MAXUMSGS(10000000)\n")
    body = b"x" * args.size
    rows = []
    try:
        with fc.connect("QM1", qm1) as c1, fc.connect("QM2", qm2) as c2:
            for persistent in (True, False):
                local = c1.open("LOCAL.IN")
                cpu0 = cpu_seconds(pid1)
                t0 = time.perf_counter()
                for _ in range(args.count):
                    local.put(body, persistent=persistent)
                base = args.count / (time.perf_counter() - t0)
                base_cpu = cpu_seconds(pid1) - cpu0
                remote = c1.open("REMOTE.IN")
                for _ in range(args.count):
                    remote.put(body, persistent=persistent)
                inq = c2.open("APP.IN", options=C.MQOO_INQUIRE | C.MQOO_INPUT_SHARED)
                before = inq.depth()
                cpu1, cpu2 = cpu_seconds(pid1), cpu_seconds(pid2)
                t0 = time.perf_counter()
                # The channel starts as soon as it exists (its queue holds messages), or again
                # after the STOP below.
                _cli(home, "mqsc", "QM1", stdin=f"DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONNAME('127.0.0.1({port})') "
                     f"XMITQ(QM2) BATCHSZ({args.batch})\n" if persistent else "START CHANNEL(QM1.TO.QM2)\n")
                # Arrived (committed at QM2), not got: a consumer's own rate is not the channel's.
                while inq.depth() < before + args.count:
                    time.sleep(0.002)
                rate = args.count / (time.perf_counter() - t0)
                rows.append({"persistent": persistent, "put_rate_local": round(base), "channel_rate": round(rate),
                             "ratio": round(rate / base, 2), "qm1_cpu_s_local_puts": round(base_cpu, 2),
                             "qm1_cpu_s_channel": round(cpu_seconds(pid1) - cpu1, 2),
                             "qm2_cpu_s_channel": round(cpu_seconds(pid2) - cpu2, 2)})
                _cli(home, "mqsc", "QM1", stdin="STOP CHANNEL(QM1.TO.QM2)\n")
                time.sleep(0.5)
    finally:
        for name in ("QM1", "QM2"):
            subprocess.run([sys.executable, "-m", "ferrymq.cli", "stop", name], env=dict(os.environ, FERRYMQ_HOME=home),
                           capture_output=True)
    print(json.dumps({"count": args.count, "size": args.size, "batch": args.batch, "load": os.getloadavg(),
                      "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
