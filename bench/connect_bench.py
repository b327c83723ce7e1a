"""What a client connection costs with authentication (issue 20) and TLS: connect +
disconnect over TCP to a queue-manager process made by ``ferrymq create`` (security on),
measured as the server's CPU seconds per connection (from /proc, so the machine's other load
matters less than for wall-clock rates) and as connections per second of one client:

- ``checked``: a user and password whose check is remembered (the usual reconnect);
- ``tls13-checked``, ``tls12-ecdhe-checked``: the same over TLS (a channel with
  SSLCIPH(ANY_TLS12_OR_HIGHER), the client offering ANY_TLS13 or
  ECDHE_RSA_AES_128_GCM_SHA256, RSA 2048 certificates made here, the client's certificate
  checked by the queue manager);
- ``scrypt``: a wrong password every time, so each costs the full scrypt check (FAILDLAY(0)
  for the run, so the refusal is not held back);
- ``no-password``: CONNAUTH(' '), no password check, the OAM's connect check only;

and request/reply round trips per second (a responder thread and a requester, each one
connection, non-persistent 256-byte messages) without and with TLS (``rr-plain``,
``rr-tls13``), with the server's CPU per round trip.

Run: ``PYTHONPATH=src .venv/bin/python bench/connect_bench.py --count 300``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from qmgr_process import BENCH_USER, proc_stat, start_qmgr

import ferrymq.client as fc
from ferrymq.client.tls import ClientTLS
from ferrymq.errors import MQError
from ferrymq.tls import devcerts
from ferrymq.tls.keyrepo import KeyRepository, default_label

TLS_CHANNEL = "BENCH.TLS"
REQ, RPL = "BENCH.REQ", "BENCH.RPL"


def mqsc(home: str, script: str) -> None:
    subprocess.run([sys.executable, "-m", "ferrymq.cli", "mqsc", "QMB"], env=dict(os.environ, FERRYMQ_HOME=home),
                   input=script, check=True, capture_output=True, text=True)


def certificates(home: str) -> str:
    """The queue manager's certificate in its default key repository and a client's; the
    client key repository's stem."""
    ca = devcerts.new_ca()
    repo = KeyRepository(str(Path(home) / "qmgrs" / "QMB" / "ssl" / "key"))
    devcerts.write_signers(repo, ca)
    devcerts.write_personal(repo, default_label("QMB"), devcerts.issue(ca, "CN=QMB"), ca)
    client = KeyRepository(str(Path(home) / "client" / "bench"))
    devcerts.write_signers(client, ca)
    devcerts.write_personal(client, "bench", devcerts.issue(ca, "CN=bench"), ca)
    return client.stem


def run(conn: str, pid: int, count: int, user: str, password: str, refused: bool, channel: str = "",
        tls: ClientTLS | None = None) -> dict[str, float]:
    _, cpu0 = proc_stat(pid)
    start = time.perf_counter()
    for _ in range(count):
        try:
            fc.connect("QMB", conn, user=user, password=password, channel=channel, tls=tls).disconnect()
        except MQError:
            if not refused:
                raise
    wall = time.perf_counter() - start
    _, cpu1 = proc_stat(pid)
    return {"per_second": round(count / wall, 1), "server_cpu_us": round((cpu1 - cpu0) / count * 1e6, 1)}


def request_reply(conn: str, pid: int, count: int, channel: str = "", tls: ClientTLS | None = None) -> dict[str, float]:
    """Round trips: put a request, the responder gets it and puts the reply, get the reply."""
    ready = threading.Event()

    def responder() -> None:
        with fc.connect("QMB", conn, channel=channel, tls=tls) as c:
            inq, out = c.open(REQ), c.open(RPL)
            ready.set()
            for _ in range(count):
                msg = inq.get(wait=30)
                out.put(msg.data, correl_id=msg.md.msg_id, persistent=False)

    thread = threading.Thread(target=responder)
    thread.start()
    ready.wait(30)
    body = b"x" * 256
    with fc.connect("QMB", conn, channel=channel, tls=tls) as c:
        out, inq = c.open(REQ), c.open(RPL)
        _, cpu0 = proc_stat(pid)
        start = time.perf_counter()
        for _ in range(count):
            sent = out.put(body, persistent=False)
            inq.get(wait=30, correl_id=sent.md.msg_id)
        wall = time.perf_counter() - start
        _, cpu1 = proc_stat(pid)
    thread.join()
    return {"per_second": round(count / wall, 1), "server_cpu_us": round((cpu1 - cpu0) / count * 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--round-trips", type=int, default=5000)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="ferrymq-connect-bench-")
    conn, pid = start_qmgr(home, [(REQ, 1_000_000), (RPL, 1_000_000)])
    password = os.environ["FERRYMQ_PASSWORD"]
    stem = certificates(home)
    mqsc(home, "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) FAILDLAY(0)\n"
               f"DEFINE CHANNEL({TLS_CHANNEL}) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER)\n")
    tls13 = ClientTLS(stem, "ANY_TLS13", "bench")
    tls12 = ClientTLS(stem, "ECDHE_RSA_AES_128_GCM_SHA256", "bench")
    try:
        results = {"checked": run(conn, pid, args.count, BENCH_USER, password, False),
                   "tls13-checked": run(conn, pid, args.count, BENCH_USER, password, False, TLS_CHANNEL, tls13),
                   "tls12-ecdhe-checked": run(conn, pid, args.count, BENCH_USER, password, False, TLS_CHANNEL,
                                              tls12),
                   "rr-plain": request_reply(conn, pid, args.round_trips),
                   "rr-tls13": request_reply(conn, pid, args.round_trips, TLS_CHANNEL, tls13),
                   "scrypt": run(conn, pid, max(args.count // 10, 10), BENCH_USER, password + "x", True)}
        mqsc(home, "ALTER QMGR CONNAUTH(' ')\n")
        # no password check: a non-administrator, asserted (an administrator needs one over TCP)
        mqsc(home, "SET AUTHREC PROFILE(QMB) OBJTYPE(QMGR) PRINCIPAL('plain') AUTHADD(CONNECT)\n")
        results["no-password"] = run(conn, pid, args.count, "plain", "", False)
    finally:
        subprocess.run([sys.executable, "-m", "ferrymq.cli", "stop", "QMB", "--immediate"],
                       env=dict(os.environ, FERRYMQ_HOME=home), capture_output=True)
    print(json.dumps({"count": args.count, "round_trips": args.round_trips, "load": os.getloadavg(), **results},
                     indent=2))


if __name__ == "__main__":
    main()
