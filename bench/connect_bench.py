"""What a client connection costs with authentication (issue 20): connect + disconnect over
TCP to a queue-manager process made by ``ferrymq create`` (security on), measured as the
server's CPU seconds per connection (from /proc, so the machine's other load matters less
than for wall-clock rates) and as connections per second of one client, in three ways:

- ``checked``: a user and password whose check is remembered (the usual reconnect);
- ``scrypt``: a wrong password every time, so each costs the full scrypt check (FAILDLAY(0)
  for the run, so the refusal is not held back);
- ``no-password``: CONNAUTH(' '), no password check, the OAM's connect check only.

Run: ``PYTHONPATH=src .venv/bin/python bench/connect_bench.py --count 300``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from qmgr_process import BENCH_USER, proc_stat, start_qmgr

import ferrymq.client as fc
from ferrymq.errors import MQError


def mqsc(home: str, script: str) -> None:
    subprocess.run([sys.executable, "-m", "ferrymq.cli", "mqsc", "QMB"], env=dict(os.environ, FERRYMQ_HOME=home),
                   input=script, check=True, capture_output=True, text=True)


def run(conn: str, pid: int, count: int, user: str, password: str, refused: bool) -> dict[str, float]:
    _, cpu0 = proc_stat(pid)
    start = time.perf_counter()
    for _ in range(count):
        try:
            fc.connect("QMB", conn, user=user, password=password).disconnect()
        except MQError:
            if not refused:
                raise
    wall = time.perf_counter() - start
    _, cpu1 = proc_stat(pid)
    return {"per_second": round(count / wall, 1), "server_cpu_us": round((cpu1 - cpu0) / count * 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="ferrymq-connect-bench-")
    conn, pid = start_qmgr(home, [])
    password = os.environ["FERRYMQ_PASSWORD"]
    mqsc(home, "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) FAILDLAY(0)\n")
    try:
        results = {"checked": run(conn, pid, args.count, BENCH_USER, password, False),
                   "scrypt": run(conn, pid, max(args.count // 10, 10), BENCH_USER, password + "x", True)}
        mqsc(home, "ALTER QMGR CONNAUTH(' ')\n")
        # no password check: a non-administrator, asserted (an administrator needs one over TCP)
        mqsc(home, "SET AUTHREC PROFILE(QMB) OBJTYPE(QMGR) PRINCIPAL('plain') AUTHADD(CONNECT)\n")
        results["no-password"] = run(conn, pid, args.count, "plain", "", False)
    finally:
        subprocess.run([sys.executable, "-m", "ferrymq.cli", "stop", "QMB", "--immediate"],
                       env=dict(os.environ, FERRYMQ_HOME=home), capture_output=True)
    print(json.dumps({"count": args.count, "load": os.getloadavg(), **results}, indent=2))


if __name__ == "__main__":
    main()
