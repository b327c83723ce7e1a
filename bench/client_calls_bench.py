"""Python and C function calls the blocking client makes per message, counted (not timed).

    PYTHONPATH=<tree>/src .venv/bin/python bench/client_calls_bench.py [--n 2000]

An embedded queue manager (bindings mode: its loop on a background thread) serves one
``Client``; ``sys.setprofile`` counts the calls of this thread only, so the figures are
the client's own and the same from run to run whatever the machine's load: asynchronous
puts, read-ahead gets, a put with a get by MsgId (a request/reply requester's calls), and
a persistent put with its commit. Compare two trees by running it with each.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from ferrymq.api import EmbeddedQueueManager
from ferrymq.store.memory import MemoryJournal

QUEUE = "SYSTEM.DEFAULT.LOCAL.QUEUE"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    n = parser.parse_args().n
    counts: collections.Counter[str] = collections.Counter()

    def count(frame: FrameType, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            counts[event] += 1

    def measure(name: str, work: Callable[[], None]) -> None:
        counts.clear()
        sys.setprofile(count)
        work()
        sys.setprofile(None)
        print(f"{name:20} {counts['call'] / n:6.2f} Python calls  {counts['c_call'] / n:6.2f} C calls per message")

    qm = EmbeddedQueueManager("QM1", MemoryJournal()).start()
    with qm.connect() as client:
        q = client.open(QUEUE, async_put=True)
        ahead = client.open(QUEUE, read_ahead=64)
        measure("async put", lambda: [q.put(b"x" * 1024, persistent=False) for _ in range(n)] and None)
        client.stat()
        measure("read-ahead get", lambda: [ahead.get(wait=5) for _ in range(n)] and None)
        ahead.close()

        def put_get() -> None:
            for _ in range(n):
                q.get(wait=5, msg_id=q.put(b"y" * 1024, persistent=False).msg_id)

        def put_commit() -> None:
            for _ in range(n):
                q.put(b"z", persistent=True, syncpoint=True)
                client.commit()

        measure("put + get by MsgId", put_get)
        measure("put + commit", put_commit)
    qm.stop()


if __name__ == "__main__":
    main()
