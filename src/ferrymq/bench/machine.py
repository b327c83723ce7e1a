"""The machine's own limits, beside the brokers: how fast bytes cross the loopback between
two processes, and how many small write + fdatasync pairs the disk completes per second
(what bounds any broker that syncs before it acknowledges, when it syncs one at a time).
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from typing import Any

from ferrymq.bench.contender import HOST

CHUNK = 1024 * 1024


def _sink(ports: Any, results: Any) -> None:
    with socket.socket() as ls:
        ls.bind((HOST, 0))
        ls.listen(1)
        ports.put(ls.getsockname()[1])
        conn, _ = ls.accept()
        got, first = 0, 0.0
        buf = bytearray(CHUNK)
        while True:
            n = conn.recv_into(buf)
            if not n:
                break
            first = first or time.perf_counter()
            got += n
        results.put((got, time.perf_counter() - first))
        conn.close()


def loopback(ctx: Any, seconds: float, total: int = 2 * 1024 * 1024 * 1024) -> float:
    """Bytes per second from this process to a child over a TCP loopback connection, sent
    in 1 MiB writes for ``seconds`` (or ``total`` bytes)."""
    ports, results = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_sink, args=(ports, results), daemon=True)
    p.start()
    try:
        with socket.create_connection((HOST, ports.get(timeout=30))) as s:
            data = bytes(CHUNK)
            sent, end = 0, time.monotonic() + seconds
            while sent < total and time.monotonic() < end:
                s.sendall(data)
                sent += CHUNK
        got, elapsed = results.get(timeout=30)
        return float(got / elapsed)
    finally:
        p.join(5)
        if p.is_alive():
            p.kill()


def fdatasync_rate(size: int, seconds: float, directory: str | None = None, max_ops: int = 100_000) -> float:
    """Appends of ``size`` bytes each followed by fdatasync, per second, one after another,
    in a temporary file under ``directory`` (the system's temporary directory by default,
    where the bench's queue manager keeps its journal)."""
    fd, path = tempfile.mkstemp(prefix="ferrymq-fsync-", dir=directory)
    try:
        data = os.urandom(size)
        ops, t0 = 0, time.perf_counter()
        end = t0 + seconds
        while ops < max_ops and time.perf_counter() < end:
            os.write(fd, data)
            os.fdatasync(fd)
            ops += 1
        return ops / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)
